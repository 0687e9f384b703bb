package io.reactivelocks.test.server;

import java.util.List;

/** Started in a child JVM by {@link ServerProcessTest}: starts a server process, prints its pid and exits. */
public final class ShutdownHookMain {

    private ShutdownHookMain() {
    }

    /**
     * Starts a never-ending server process and exits without closing it.
     *
     * @param args unused
     */
    public static void main(String[] args) {
        ServerProcess p = ServerProcess.builder("orphan")
                .command(layout -> List.of("/bin/sh", "-c", "exec tail -f /dev/null"))
                .readiness(layout -> true)
                .start();
        System.out.println("pid " + p.pid() + " " + p.directory());
        System.out.flush();
        System.exit(0);
    }
}
