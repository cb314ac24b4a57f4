/// A customer's summary, as an upload's answer holds it: the transactions that can grant access,
/// the balances, the number of transactions and the newest ones; and the transaction stored with
/// a JWS, found by the digest of its bytes. Each part is defined here once, over a customer named
/// by SQL expressions: SQLite reads one customer's parts in one statement through its indexes,
/// the customer bound (``Customer/numbered``) or named by the transaction an upload's digest
/// finds; PostgreSQL reads the parts of a group's customers in one prepared statement, each part
/// read for each row of a list of customers (``Customer/listed``, `LATERAL`).
enum SummaryStatements {
    /// How a statement names the customer whose part it reads.
    struct Customer: Sendable {
        let bundleID: String
        let appUserID: String

        /// Two numbered placeholders, `?1` for the app and `?2` for the app user ID, each bound
        /// once however often the statement names them (SQLite).
        static let numbered = Customer(bundleID: "?1", appUserID: "?2")
        /// The columns of a row `owner` of a list of customers.
        static let listed = Customer(bundleID: "owner.bundle_id", appUserID: "owner.app_user_id")

        /// The row of `table` (a `transactions` or `balances` alias) is the customer's.
        func owns(_ table: String) -> String {
            "\(table).bundle_id = \(bundleID) AND \(table).app_user_id = \(appUserID)"
        }
    }

    /// The customer's transactions (`t`) that can grant access, in no order: read through the
    /// index that holds only those (a customer's consumables are not read to find there are none).
    static func access(_ customer: Customer, columns: String) -> String {
        "SELECT \(columns) FROM transactions t WHERE \(customer.owns("t")) AND t.product_type <> 'Consumable'"
    }

    /// The customer's balances (`b`), every currency.
    static func balances(_ customer: Customer) -> String {
        "SELECT b.currency, b.amount FROM balances b WHERE \(customer.owns("b"))"
    }

    /// The number of the customer's transactions, as `n`.
    static func count(_ customer: Customer) -> String {
        "SELECT COUNT(*) AS n FROM transactions t WHERE \(customer.owns("t"))"
    }

    /// The customer's `limit` newest transactions (`t`), newest first.
    static func recent(_ customer: Customer, columns: String, limit: String) -> String {
        """
        SELECT \(columns) FROM transactions t WHERE \(customer.owns("t"))
        ORDER BY t.purchase_date DESC, t.transaction_id DESC LIMIT \(limit)
        """
    }

    /// The transaction stored with a JWS whose digest is the expression `digest`.
    static func signed(digest: String, columns: String) -> String {
        "SELECT \(columns) FROM transactions WHERE signed_digest = \(digest)"
    }
}

extension CustomerSummary {
    /// Puts the transactions the parts read, in no order, in the summary's: those that can grant
    /// access oldest first, the recent ones newest first (ties by transaction ID).
    mutating func orderTransactions() {
        accessTransactions.sort { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
        recentTransactions.sort { ($0.purchaseDate, $0.transactionID) > ($1.purchaseDate, $1.transactionID) }
    }
}
