/**
 * Code the SQL dialect packages share and users do not call: the stored form of names
 * ({@link io.reactivelocks.r2dbc.internal.StoredForm}) and the loading and filling of SQL templates
 * ({@link io.reactivelocks.r2dbc.internal.SqlTemplates}). Not API: it may change in any release.
 */
@NullMarked
package io.reactivelocks.r2dbc.internal;

import org.jspecify.annotations.NullMarked;
