/**
 * The leader-election engine over {@link io.reactivelocks.LockClient}. <b>Not API</b>: anything
 * here may change in any release.
 */
package io.reactivelocks.internal.election;
