/**
 * Task queues ("state transition" with retries): tasks registered under a queue name, captured
 * by any number of workers across the fleet, each capture a lease with its own fencing token.
 * {@link io.reactivelocks.task.TaskQueue} is the one API for every store; its value types are
 * {@link io.reactivelocks.task.TaskClaim}, {@link io.reactivelocks.task.TaskStatus} and
 * {@link io.reactivelocks.task.TaskState}. Stores implement {@link io.reactivelocks.spi.task.TaskStore}.
 */
@NullMarked
package io.reactivelocks.task;

import org.jspecify.annotations.NullMarked;
