package io.reactivelocks.dashboard;

import io.reactivelocks.LockNames;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A live web page of a store's locks, for whoever serves it (the Spring Boot starter under the
 * actuator base path, {@code reactive-locks-cli serve}): the page ({@link #page}) and the
 * server-sent events that feed it ({@link #snapshots}) — what every client of the store holds, as
 * {@link LockAdmin#list} sees it, polled and sent when it changed. The page shows holders, tokens,
 * a countdown of the remaining lease, waiters, and the recent grants, handoffs and releases it saw;
 * with write operations allowed, a force-release button per name.
 *
 * <p>Nothing here blocks: the snapshots are a {@link Flux} on the given scheduler's timer. Owner ids
 * are not sent (an owner id is what a release is checked against).
 */
public final class LockDashboard {

    /** How often the store is listed by default. */
    public static final Duration DEFAULT_PERIOD = Duration.ofMillis(500);

    /** At most this many grants per snapshot ({@code truncated} says when more were held). */
    public static final int LIMIT = 1000;

    /** A snapshot is sent at least this often even when nothing changed, so that proxies keep the stream open. */
    static final Duration HEARTBEAT = Duration.ofSeconds(15);

    private static final String PAGE = load("dashboard.html");

    private LockDashboard() {
    }

    /**
     * The page, pointing at its event stream and (when write operations are allowed) at the
     * force-release and revocation actions.
     *
     * @param eventsUrl  the URL (absolute path or relative to the page) of {@link #snapshots}'s event stream
     * @param releaseUrl the URL to {@code POST} a force-release to ({@link #forceRelease}), with the name as query
     *                   parameter {@code name}; {@code null} when write operations are not allowed (no buttons)
     * @param revokeUrl  the URL to {@code POST} a revocation request to ({@link #revoke}), with query parameters
     *                   {@code name} and {@code reason}; {@code null} when not allowed (no buttons)
     * @return the HTML page (UTF-8)
     */
    public static String page(String eventsUrl, @Nullable String releaseUrl, @Nullable String revokeUrl) {
        Objects.requireNonNull(eventsUrl, "eventsUrl");
        return PAGE.replace("__EVENTS_URL__", jsString(eventsUrl))
                .replace("__RELEASE_URL__", releaseUrl == null ? "null" : "\"" + jsString(releaseUrl) + "\"")
                .replace("__REVOKE_URL__", revokeUrl == null ? "null" : "\"" + jsString(revokeUrl) + "\"");
    }

    /**
     * The event stream's data: one JSON object per snapshot of what the store holds under
     * {@code prefix} — sent at once, then whenever it changed (checked every {@code period}) and at
     * least every 15 s. A store that fails gives a snapshot with {@code error} in words, and the
     * stream goes on.
     *
     * @param admin     the store's admin
     * @param storeName the store's name, shown on the page
     * @param prefix    the names to show ({@code ""} for all)
     * @param period    how often to list the store
     * @param timer     the scheduler of the polling timer
     * @return the JSON texts, one per event; endless (cancel to stop)
     */
    public static Flux<String> snapshots(LockAdmin admin, String storeName, String prefix, Duration period, Scheduler timer) {
        Objects.requireNonNull(admin, "admin");
        Objects.requireNonNull(storeName, "storeName");
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(timer, "timer");
        if (period == null || period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive, was " + period);
        }
        AtomicReference<String> last = new AtomicReference<>();
        AtomicLong lastSent = new AtomicLong(Long.MIN_VALUE);
        long heartbeatTicks = Math.max(1, HEARTBEAT.toMillis() / Math.max(1, period.toMillis()));
        return Flux.interval(Duration.ZERO, period, timer)
                .onBackpressureDrop()
                .concatMap(tick -> snapshot(admin, storeName, prefix)
                        .filter(json -> {
                            boolean changed = !json.equals(last.get());
                            boolean due = tick - lastSent.get() >= heartbeatTicks;
                            if (changed || due) {
                                last.set(json);
                                lastSent.set(tick);
                                return true;
                            }
                            return false;
                        }), 1);
    }

    /**
     * @param admin     the store's admin
     * @param storeName the store's name
     * @param prefix    the names to show
     * @return a {@link #snapshots} stream on Reactor's parallel scheduler, listing every {@link #DEFAULT_PERIOD}
     */
    public static Flux<String> snapshots(LockAdmin admin, String storeName, String prefix) {
        return snapshots(admin, storeName, prefix, DEFAULT_PERIOD, Schedulers.parallel());
    }

    private static Mono<String> snapshot(LockAdmin admin, String storeName, String prefix) {
        return admin.list(prefix).take(LIMIT + 1L).collectList()
                .map(all -> json(storeName, all.subList(0, Math.min(all.size(), LIMIT)), all.size() > LIMIT, null))
                .onErrorResume(e -> Mono.just(json(storeName, List.of(), false, String.valueOf(e.getMessage()))));
    }

    /**
     * Force-releases {@code name} for the page's button.
     *
     * @param admin the store's admin
     * @param name  the name the page asked for
     * @return a JSON object {@code {"name":…,"released":[tokens…]}}
     * @throws IllegalArgumentException when the name is empty or too long
     */
    public static Mono<String> forceRelease(LockAdmin admin, String name) {
        LockNames.check(name, "name");
        return admin.forceRelease(name).map(removed -> {
            StringBuilder b = new StringBuilder("{\"name\":\"").append(jsString(name)).append("\",\"released\":[");
            for (int i = 0; i < removed.size(); i++) {
                b.append(i == 0 ? "" : ",").append(removed.get(i).token());
            }
            return b.append("]}").toString();
        });
    }

    /**
     * Asks the holder of the lock {@code name} to let go, for the page's button ({@link LockAdmin#revoke}).
     *
     * @param admin  the store's admin
     * @param name   the name the page asked for
     * @param reason why; blank for "requested from the dashboard"
     * @return a JSON object {@code {"name":…,"asked":true|false}}
     * @throws IllegalArgumentException when the name is empty or too long, or the reason too long
     */
    public static Mono<String> revoke(LockAdmin admin, String name, @Nullable String reason) {
        String why = reason == null || reason.isBlank() ? "requested from the dashboard" : reason;
        return admin.revoke(name, why).map(asked -> "{\"name\":\"" + jsString(name) + "\",\"asked\":" + asked + "}");
    }

    /** The JSON of one snapshot (no time stamp: equal holdings give equal text, so only changes are sent). */
    static String json(String storeName, List<HeldGrant> grants, boolean truncated, @Nullable String error) {
        StringBuilder b = new StringBuilder(64 + grants.size() * 120);
        b.append("{\"store\":\"").append(jsString(storeName)).append("\",\"truncated\":").append(truncated)
                .append(",\"error\":").append(error == null ? "null" : "\"" + jsString(error) + "\"").append(",\"held\":[");
        for (int i = 0; i < grants.size(); i++) {
            HeldGrant g = grants.get(i);
            b.append(i == 0 ? "" : ",").append("{\"name\":\"").append(jsString(g.name()))
                    .append("\",\"concept\":\"").append(g.concept())
                    .append("\",\"role\":\"").append(g.role().name().toLowerCase(Locale.ROOT))
                    .append("\",\"token\":").append(g.token())
                    // seconds, rounded down: a countdown the page runs itself; finer would make every snapshot differ
                    .append(",\"remainingSeconds\":").append(g.remaining() == null ? "null" : Long.toString(g.remaining().toSeconds()))
                    .append(",\"payload\":").append(g.payload() == null ? "null" : "\"" + jsString(g.payload()) + "\"")
                    .append(",\"waiters\":").append(g.waiters())
                    .append(",\"task\":").append(g.task() == null ? "null" : "\"" + jsString(g.task()) + "\"").append('}');
        }
        return b.append("]}").toString();
    }

    /** Escapes for a JSON or JavaScript string literal, also {@code <}, {@code >} and {@code &} (safe inside a page). */
    static String jsString(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029' || Character.isSurrogate(c)
                            && !(Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))
                            || Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1)))) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }

    private static String load(String resource) {
        try (InputStream in = LockDashboard.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + resource + " next to " + LockDashboard.class.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
