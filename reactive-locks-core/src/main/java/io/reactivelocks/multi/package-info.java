/**
 * The multi-lock: a set of lock names taken all or nothing, in one canonical order, one lease and
 * fencing token per name. {@link io.reactivelocks.multi.MultiLock} is the API,
 * {@link io.reactivelocks.multi.MultiLease} the granted set. Built on any
 * {@link io.reactivelocks.LockClient}, so every store has it.
 */
@NullMarked
package io.reactivelocks.multi;

import org.jspecify.annotations.NullMarked;
