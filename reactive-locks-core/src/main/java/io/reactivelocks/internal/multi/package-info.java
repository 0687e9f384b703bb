/**
 * The multi-lock engine: the one implementation of {@link io.reactivelocks.multi.MultiLock}, over
 * the public {@link io.reactivelocks.LockClient} API. Not API.
 */
@NullMarked
package io.reactivelocks.internal.multi;

import org.jspecify.annotations.NullMarked;
