#include "CKakinSQLite.h"

/* The SQLite that sqlite-nio builds into the same binary, with its symbol prefix. */
int sqlite_nio_sqlite3_db_config(void *connection, int op, ...);

/* SQLITE_DBCONFIG_ENABLE_QPSG, from sqlite3.h. */
#define KAKIN_SQLITE_DBCONFIG_ENABLE_QPSG 1007

int kakin_sqlite_enable_qpsg(void *connection) {
    int enabled = 0;
    return sqlite_nio_sqlite3_db_config(connection, KAKIN_SQLITE_DBCONFIG_ENABLE_QPSG, 1, &enabled);
}
