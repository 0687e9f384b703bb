package io.reactivelocks.examples.vertx;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Runs one {@link VertxLockService} instance against a Redis server until the JVM is stopped
 * (Ctrl-C undeploys it: leadership is released).
 *
 * <p>Arguments: {@code [redis-url] [instance-name] [http-port] [period-seconds]}, defaults
 * {@code redis://localhost:6379}, {@code instance-<pid>}, {@code 8080}, {@code 10}.
 */
public final class VertxLockServiceMain {

    private VertxLockServiceMain() {
    }

    /**
     * @param args {@code [redis-url] [instance-name] [http-port] [period-seconds]}
     */
    public static void main(String[] args) {
        RedisURI uri = RedisURI.create(args.length > 0 ? args[0] : "redis://localhost:6379");
        String instance = args.length > 1 ? args[1] : "instance-" + ProcessHandle.current().pid();
        int port = args.length > 2 ? Integer.parseInt(args[2]) : 8080;
        Duration period = Duration.ofSeconds(args.length > 3 ? Long.parseLong(args[3]) : 10);
        ServiceOptions options = ServiceOptions.defaults(instance).withPeriod(period).withHttpPort(port);

        RedisClient redis = RedisClient.create(uri);
        Vertx vertx = Vertx.vertx();
        VertxLockService service = new VertxLockService(redis, uri, options, claim ->
                // printing is blocking I/O: keep it off the event loop
                vertx.executeBlocking(() -> {
                    System.out.printf("%s: ran the job for window %d of %s%n", instance, claim.window(), claim.period());
                    return null;
                }));
        vertx.deployVerticle(service).onComplete(ar -> vertx.executeBlocking(() -> {
            if (ar.succeeded()) {
                System.out.printf("%s: GET http://localhost:%d/status (Ctrl-C stops)%n", instance, service.httpPort());
            } else {
                System.err.printf("%s: could not start: %s%n", instance, ar.cause());
                vertx.close().onComplete(closed -> redis.shutdownAsync()); // then the JVM ends
            }
            return null;
        }));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                // closing Vert.x undeploys the service, which releases leadership
                vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println(instance + ": close failed: " + e);
            } finally {
                redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }, "vertx-lock-service-shutdown"));
    }
}
