/**
 * JMH benchmarks of the engine's own overhead against the raw store clients (not published; see docs/BENCHMARKS.md).
 */
@NullMarked
package io.reactivelocks.benchmarks;

import org.jspecify.annotations.NullMarked;
