/**
 * The task-queue SPI: what a store implements ({@link io.reactivelocks.spi.task.TaskStore}) for the
 * one task-queue engine in {@code io.reactivelocks.internal.task} to run on it, and its small records.
 * The engine does the rest — demand, waiting, renewal, retries of transient failures, timeouts,
 * cancellation — once for every store.
 */
@NullMarked
package io.reactivelocks.spi.task;

import org.jspecify.annotations.NullMarked;
