/**
 * The base class of a store ({@link io.reactivelocks.spi.store.AbstractLockStore}): it puts the
 * store's SPI parts ({@code io.reactivelocks.spi} and its sub-packages) together into a
 * {@link io.reactivelocks.LockStore}, handing out each concept through the API's factories. It sits
 * above the SPI packages, which never depend on it, so the SPI has no package cycle.
 */
@NullMarked
package io.reactivelocks.spi.store;

import org.jspecify.annotations.NullMarked;
