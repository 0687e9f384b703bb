/**
 * Test tools for reactive-locks backends: {@link io.reactivelocks.test.FencedResource}, an
 * in-memory resource that checks fencing tokens, and {@link io.reactivelocks.test.MutualExclusionChecker},
 * which records who held which lock when and reports overlaps. Real-server fixtures live in
 * {@code io.reactivelocks.test.server}, network faults in {@code io.reactivelocks.test.fault}.
 */
@NullMarked
package io.reactivelocks.test;

import org.jspecify.annotations.NullMarked;
