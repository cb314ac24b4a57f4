#ifndef CKAKIN_SQLITE_H
#define CKAKIN_SQLITE_H

/// Turns on SQLite's query-planner stability guarantee for a connection (a `sqlite3 *`), so a
/// prepared statement keeps its plan whatever values are bound, instead of being compiled again
/// when a bound value might change the plan. Returns SQLite's result code.
///
/// `sqlite3_db_config` takes variable arguments, which Swift cannot call; this wraps it.
int kakin_sqlite_enable_qpsg(void *connection);

/// Puts a thin layer over SQLite's own page cache, for every connection opened afterwards in this
/// process: at the end of a write transaction SQLite asks the cache to drop the pages past the end
/// of the database, and SQLite's cache scans its whole hash table for them once a B-tree split has
/// moved a page through a number far past the end; the layer skips the drop when nothing can be
/// there. Only possible before SQLite is first used in the process: returns 1 when installed, 0
/// when SQLite was already in use (the process keeps SQLite's cache as it is). Thread-safe; the
/// first call decides.
int kakin_sqlite_install_page_cache(void);

#endif
