/**
 * A live web page of a store's locks ({@link io.reactivelocks.dashboard.LockDashboard}): the page
 * and the server-sent events that feed it, for the Spring Boot starter and the CLI to serve.
 */
@NullMarked
package io.reactivelocks.dashboard;

import org.jspecify.annotations.NullMarked;
