package io.reactivelocks.examples.webflux;

import io.reactivelocks.LockClient;
import java.util.Objects;
import org.springframework.context.SmartLifecycle;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * {@code GET /locks/{name}/events}: the lock's state as {@code text/event-stream}, first the current
 * state, then every change of holder ({@link LockClient#observe}). Each event is named after the
 * state ({@code free} / {@code held}), carries the token as its id when held, and a
 * {@link LockEvent} as JSON data. All clients watching one name share one upstream subscription
 * (the lock client's); a client disconnecting cancels only its own stream.
 *
 * <p>Event streams never end by themselves, so they would hold up the web server's graceful
 * shutdown until its timeout: as a {@link SmartLifecycle} in the default (last-started,
 * first-stopped) phase, this controller completes every open stream when the context starts to
 * stop, before the server waits for in-flight requests to drain.
 */
@RestController
public class LockEventsController implements SmartLifecycle {

    private final LockClient locks;
    private final Sinks.Empty<Void> stopping = Sinks.empty();
    private volatile boolean running;

    /** @param locks the application's lock client */
    public LockEventsController(LockClient locks) {
        this.locks = Objects.requireNonNull(locks, "locks");
    }

    /**
     * @param name the lock name, e.g. {@code stock:apple}
     * @return the state stream; ends when the client disconnects, the service stops or the lock client closes
     */
    @GetMapping(path = "/locks/{name}/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public Flux<ServerSentEvent<LockEvent>> events(@PathVariable("name") String name) {
        return locks.observe(name)
                .takeUntilOther(stopping.asMono())
                .map(state -> {
                    LockEvent e = LockEvent.of(state);
                    ServerSentEvent.Builder<LockEvent> sse = ServerSentEvent.builder(e).event(e.state());
                    return (e.token() == null ? sse : sse.id(Long.toString(e.token()))).build();
                });
    }

    /** Marks the controller running (nothing else to start). */
    @Override
    public void start() {
        running = true;
    }

    /** Completes every open event stream; later requests get an empty stream. */
    @Override
    public void stop() {
        running = false;
        // FAIL_TERMINATED (already stopped) is the only other result for an empty sink: nothing to do
        stopping.tryEmitEmpty();
    }

    /** @return true between {@link #start()} and {@link #stop()} */
    @Override
    public boolean isRunning() {
        return running;
    }
}
