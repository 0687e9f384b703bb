/**
 * Example Spring Boot WebFlux service on reactive-locks: stock reserved under
 * {@link io.reactivelocks.LockClient#withLock withLock} and written with a fenced {@code UPDATE}
 * on PostgreSQL ({@link io.reactivelocks.examples.webflux.StockController}), and lock states as
 * server-sent events ({@link io.reactivelocks.examples.webflux.LockEventsController}).
 */
@NullMarked
package io.reactivelocks.examples.webflux;

import org.jspecify.annotations.NullMarked;
