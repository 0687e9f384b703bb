/** The engine side of {@link io.reactivelocks.admin.LockAdmin}: listing and force-release over a store's parts. */
@NullMarked
package io.reactivelocks.internal.admin;

import org.jspecify.annotations.NullMarked;
