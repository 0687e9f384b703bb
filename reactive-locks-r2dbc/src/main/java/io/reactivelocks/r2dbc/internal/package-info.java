/**
 * Code the SQL dialect packages share and users do not call: the stored form of names
 * ({@link io.reactivelocks.r2dbc.internal.StoredForm}), the loading and filling of SQL templates
 * ({@link io.reactivelocks.r2dbc.internal.SqlTemplates}), a backend's pool
 * ({@link io.reactivelocks.r2dbc.internal.BackendPool}), the rows to delete on close
 * ({@link io.reactivelocks.r2dbc.internal.OutstandingRows}), the driver errors' common ground
 * ({@link io.reactivelocks.r2dbc.internal.DriverErrors}), durations in the statements' microseconds
 * ({@link io.reactivelocks.r2dbc.internal.Micros}) and the options builders' argument checks
 * ({@link io.reactivelocks.r2dbc.internal.OptionChecks}). The fair lock over a dialect's mutex is the
 * SPI's {@link io.reactivelocks.spi.FairLockBackend}, which Redis shares. Not API: it may change in any release.
 */
@NullMarked
package io.reactivelocks.r2dbc.internal;

import org.jspecify.annotations.NullMarked;
