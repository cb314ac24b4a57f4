#ifndef CKAKIN_SQLITE_H
#define CKAKIN_SQLITE_H

/// Turns on SQLite's query-planner stability guarantee for a connection (a `sqlite3 *`), so a
/// prepared statement keeps its plan whatever values are bound, instead of being compiled again
/// when a bound value might change the plan. Returns SQLite's result code.
///
/// `sqlite3_db_config` takes variable arguments, which Swift cannot call; this wraps it.
int kakin_sqlite_enable_qpsg(void *connection);

#endif
