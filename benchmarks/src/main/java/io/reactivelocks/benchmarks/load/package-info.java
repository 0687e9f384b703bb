/**
 * The load harness: every store and competing library driven through the same scenarios, with its statistics, report and charts (not published; see docs/BENCHMARKS.md).
 */
@NullMarked
package io.reactivelocks.benchmarks.load;

import org.jspecify.annotations.NullMarked;
