/**
 * Test tools for reactive-locks backends: {@link io.reactivelocks.test.FencedResource}, an
 * in-memory resource that checks fencing tokens, and {@link io.reactivelocks.test.MutualExclusionChecker},
 * which records who held which lock when and reports overlaps, and the contract suites every
 * store runs. Real-server fixtures ({@code io.reactivelocks.test.server}) and network faults
 * ({@code io.reactivelocks.test.fault}) are in {@code reactive-locks-test-servers}, so that a store
 * author gets the contracts without them.
 */
@NullMarked
package io.reactivelocks.test;

import org.jspecify.annotations.NullMarked;
