extension LedgerStoreError {
    /// The ledger's error for a database driver's failure that reached the caller as it was
    /// (SQLite's through GRDB, PostgreSQL's through PostgresNIO), decided by the error's type and
    /// code as each engine decides its own: a full disk is ``Code/diskFull``, a lost or busy
    /// database ``Code/unavailable``. `nil` for an error that is not a driver's.
    public init?(driverError error: any Error) {
        for map in [SQLiteLedger.ledgerError, PostgresLedger.ledgerError] {
            if let mapped = map(error) as? LedgerStoreError {
                self = mapped
                return
            }
        }
        return nil
    }
}
