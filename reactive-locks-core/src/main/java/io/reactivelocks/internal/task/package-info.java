/**
 * The task-queue engine: demand-driven capture, waiting, renewal, retries of transient failures,
 * timeouts and cancellation over a {@link io.reactivelocks.spi.task.TaskStore}, written once for
 * every store. <b>Not API</b>: anything here may change in any release.
 */
@NullMarked
package io.reactivelocks.internal.task;

import org.jspecify.annotations.NullMarked;
