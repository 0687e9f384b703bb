package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.test.StoreLayeringContract;

/** This store keeps the layering of every store: the core's API and SPI only, every package {@code @NullMarked}. */
class MariaDbStoreLayeringTest extends StoreLayeringContract {

    @Override
    protected String storePackage() {
        return "io.reactivelocks.r2dbc.mariadb";
    }
}
