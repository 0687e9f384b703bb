package io.reactivelocks.spring.boot;

import io.reactivelocks.LockStore;
import io.reactivelocks.dashboard.LockDashboard;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The live lock dashboard in a WebFlux application, with {@code reactive-locks.dashboard.enabled=true} and a
 * {@link LockStore} bean: {@code GET <actuator base path>/reactivelocks/dashboard} (the page) and {@code …/events}
 * (server-sent snapshots of what every client of the store holds, see {@link LockDashboard}). With
 * {@code reactive-locks.dashboard.write-operations=true} the page shows revoke and force-release buttons,
 * {@code POST …/revoke?name=…&reason=…} asks a holder to let go and {@code POST …/release?name=…} force-releases;
 * otherwise those requests are answered 403. The base path is
 * {@code management.endpoints.web.base-path} ({@code /actuator}); the routes are on the application's server. Secure
 * them like the actuator.
 */
@AutoConfiguration(after = ReactiveLocksAutoConfiguration.class)
@ConditionalOnClass({RouterFunction.class, LockDashboard.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "reactive-locks.dashboard.enabled")
public class ReactiveLocksDashboardAutoConfiguration {

    /** Created by Spring Boot's auto-configuration. */
    public ReactiveLocksDashboardAutoConfiguration() {
    }

    @Bean
    RouterFunction<ServerResponse> reactiveLocksDashboard(ObjectProvider<LockStore> stores, ReactiveLocksProperties properties,
                                                          Environment environment) {
        String base = environment.getProperty("management.endpoints.web.base-path", "/actuator");
        String path = (base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + "/reactivelocks/dashboard";
        boolean writable = properties.getDashboard().isWriteOperations();
        // read at startup, on this thread: the page is a class-path resource, and reading it is blocking I/O
        String page = LockDashboard.page(path + "/events", writable ? path + "/release" : null, writable ? path + "/revoke" : null);
        return RouterFunctions.route()
                .GET(path, request -> ServerResponse.ok().contentType(MediaType.TEXT_HTML).bodyValue(page))
                .GET(path + "/events", request -> {
                    LockStore store = stores.getIfUnique();
                    if (store == null) {
                        return ServerResponse.status(HttpStatus.SERVICE_UNAVAILABLE).bodyValue("no single LockStore bean");
                    }
                    Flux<ServerSentEvent<String>> events = LockDashboard.snapshots(store.admin(), store.name(), "")
                            .map(json -> ServerSentEvent.builder(json).build());
                    return ServerResponse.ok().contentType(MediaType.TEXT_EVENT_STREAM)
                            .body(events, ServerSentEvent.class);
                })
                .POST(path + "/release", request -> {
                    LockStore store = stores.getIfUnique();
                    if (!writable || store == null) {
                        return ServerResponse.status(HttpStatus.FORBIDDEN)
                                .bodyValue("force-release is off: reactive-locks.dashboard.write-operations=true allows it");
                    }
                    String name = request.queryParam("name").orElse("");
                    return Mono.defer(() -> LockDashboard.forceRelease(store.admin(), name))
                            .flatMap(json -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(json))
                            .onErrorResume(IllegalArgumentException.class,
                                    e -> ServerResponse.badRequest().bodyValue(String.valueOf(e.getMessage())));
                })
                .POST(path + "/revoke", request -> {
                    LockStore store = stores.getIfUnique();
                    if (!writable || store == null) {
                        return ServerResponse.status(HttpStatus.FORBIDDEN)
                                .bodyValue("revocation is off: reactive-locks.dashboard.write-operations=true allows it");
                    }
                    String name = request.queryParam("name").orElse("");
                    String reason = request.queryParam("reason").orElse("");
                    return Mono.defer(() -> LockDashboard.revoke(store.admin(), name, reason))
                            .flatMap(json -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(json))
                            .onErrorResume(IllegalArgumentException.class,
                                    e -> ServerResponse.badRequest().bodyValue(String.valueOf(e.getMessage())));
                })
                .build();
    }
}
