/**
 * The leader-election engine over {@link io.reactivelocks.LockClient}. <b>Not API</b>: anything
 * here may change in any release.
 */
@NullMarked
package io.reactivelocks.internal.election;

import org.jspecify.annotations.NullMarked;
