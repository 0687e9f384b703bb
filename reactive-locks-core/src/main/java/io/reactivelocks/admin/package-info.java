/**
 * The operator's view of a store: {@link io.reactivelocks.admin.LockAdmin} lists what every client
 * of the store holds under a name prefix and force-releases a name, from the store's own state
 * (not one client's). Obtain it from a session: {@link io.reactivelocks.LockStore#admin()}.
 */
@NullMarked
package io.reactivelocks.admin;

import org.jspecify.annotations.NullMarked;
