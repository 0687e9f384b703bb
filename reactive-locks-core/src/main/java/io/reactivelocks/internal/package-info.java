/**
 * The engine: acquire loop, renewal, loss detection, reentrancy and observation fan-out, written
 * once for every backend. <b>Not API</b>: anything here may change in any release.
 */
@NullMarked
package io.reactivelocks.internal;

import org.jspecify.annotations.NullMarked;
