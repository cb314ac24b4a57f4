/// One step of the ledger's schema history.
///
/// Migrations are append-only: a published migration is never edited or removed, a change is a
/// new migration at the end of ``LedgerSchema/migrations``. They are plain SQL text and never use
/// the store's Swift types, so an old database upgrades the same way whatever the code looks like
/// today.
struct LedgerMigration: Sendable {
    /// Unique, stable name, recorded in the `migrations` table once applied.
    let id: String
    /// The statements, run in order inside one transaction.
    let statements: @Sendable (LedgerSQLDialect) -> [String]
}

/// The ledger's tables.
///
/// Conventions, chosen so the same schema runs on SQLite and PostgreSQL:
/// - text is `TEXT`, integers `INTEGER` (32-bit values) or `BIGINT` (amounts, ids);
/// - instants are `BIGINT` milliseconds since 1970-01-01 UTC;
/// - booleans are not stored: they are derived (`delivered_at IS NOT NULL`);
/// - every invariant the database can hold (primary and unique keys, `NOT NULL`, `CHECK`,
///   foreign keys) is declared here, so no replica can break it.
enum LedgerSchema {
    /// Name of the table that lists applied migrations.
    static let migrationsTable = "migrations"

    /// Every migration, oldest first. Append only.
    static let migrations: [LedgerMigration] = [
        LedgerMigration(id: "0001_ledger") { dialect in
            [
                """
                CREATE TABLE transactions (
                    transaction_id TEXT PRIMARY KEY,
                    original_transaction_id TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    app_user_id TEXT,
                    product_id TEXT NOT NULL,
                    product_type TEXT NOT NULL,
                    quantity INTEGER NOT NULL CHECK (quantity > 0),
                    purchase_date BIGINT NOT NULL,
                    expires_date BIGINT,
                    revocation_date BIGINT,
                    revocation_reason INTEGER,
                    environment TEXT NOT NULL,
                    app_account_token TEXT,
                    signed_transaction TEXT,
                    source TEXT NOT NULL,
                    recorded_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX transactions_by_customer ON transactions (bundle_id, app_user_id)",
                "CREATE INDEX transactions_by_original ON transactions (original_transaction_id)",
                """
                CREATE TABLE notifications (
                    notification_uuid TEXT PRIMARY KEY,
                    type TEXT NOT NULL,
                    subtype TEXT,
                    bundle_id TEXT NOT NULL,
                    transaction_id TEXT,
                    signed_payload TEXT NOT NULL,
                    received_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX notifications_by_transaction ON notifications (transaction_id)",
                """
                CREATE TABLE ledger_entries (
                    id \(dialect.generatedPrimaryKey),
                    idempotency_key TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL CHECK (kind IN ('credit', 'spend', 'clawback')),
                    bundle_id TEXT NOT NULL,
                    app_user_id TEXT NOT NULL,
                    currency TEXT NOT NULL,
                    amount BIGINT NOT NULL,
                    transaction_id TEXT REFERENCES transactions (transaction_id),
                    shortfall BIGINT NOT NULL DEFAULT 0 CHECK (shortfall >= 0),
                    created_at BIGINT NOT NULL,
                    CHECK ((kind = 'credit' AND amount > 0) OR (kind <> 'credit' AND amount <= 0)),
                    CHECK (kind = 'spend' OR transaction_id IS NOT NULL)
                )
                """,
                "CREATE INDEX ledger_entries_by_customer ON ledger_entries (bundle_id, app_user_id, currency)",
                "CREATE INDEX ledger_entries_by_transaction ON ledger_entries (transaction_id)",
                """
                CREATE TABLE balances (
                    bundle_id TEXT NOT NULL,
                    app_user_id TEXT NOT NULL,
                    currency TEXT NOT NULL,
                    amount BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, app_user_id, currency)
                )
                """,
                """
                CREATE TABLE events (
                    id \(dialect.generatedPrimaryKey),
                    type TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    app_user_id TEXT,
                    payload TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE event_deliveries (
                    event_id BIGINT NOT NULL REFERENCES events (id),
                    endpoint TEXT NOT NULL,
                    attempts INTEGER NOT NULL CHECK (attempts > 0),
                    last_attempt_at BIGINT NOT NULL,
                    delivered_at BIGINT,
                    next_attempt_at BIGINT,
                    PRIMARY KEY (event_id, endpoint)
                )
                """,
                "CREATE INDEX event_deliveries_due ON event_deliveries (endpoint, next_attempt_at)",
                """
                CREATE TABLE content_packages (
                    bundle_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    version TEXT NOT NULL,
                    sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
                    size BIGINT NOT NULL CHECK (size >= 0),
                    bytes \(dialect.bytesType) NOT NULL,
                    uploaded_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, product_id, version)
                )
                """,
            ]
        },
        LedgerMigration(id: "0002_customer_pages") { _ in
            [
                """
                CREATE INDEX transactions_by_customer_purchase
                ON transactions (bundle_id, app_user_id, purchase_date, transaction_id)
                """
            ]
        },
        // The SHA-256 of each stored JWS, so the same signed bytes posted again are found without
        // decoding or verifying them (rows stored before it have none). The index by customer is
        // a prefix of the one by customer and purchase date, which serves its queries as well.
        LedgerMigration(id: "0003_signed_digest") { dialect in
            [
                "ALTER TABLE transactions ADD COLUMN signed_digest \(dialect.bytesType)",
                "CREATE INDEX transactions_by_signed_digest ON transactions (signed_digest)",
                "DROP INDEX transactions_by_customer",
            ]
        },
        // Reconciliation runs, for the dashboard; and the lookups its pages make (events of a
        // customer, notifications newest first).
        LedgerMigration(id: "0004_dashboard") { dialect in
            [
                """
                CREATE TABLE reconciliation_runs (
                    id \(dialect.generatedPrimaryKey),
                    bundle_id TEXT NOT NULL,
                    started_at BIGINT NOT NULL,
                    finished_at BIGINT NOT NULL,
                    transactions_seen INTEGER NOT NULL CHECK (transactions_seen >= 0),
                    transactions_recorded INTEGER NOT NULL CHECK (transactions_recorded >= 0),
                    transactions_revoked INTEGER NOT NULL CHECK (transactions_revoked >= 0),
                    failure TEXT,
                    CHECK (finished_at >= started_at)
                )
                """,
                "CREATE INDEX events_by_customer ON events (bundle_id, app_user_id, id)",
                "CREATE INDEX notifications_by_received ON notifications (received_at)",
            ]
        },
        // Leases on outbox deliveries: a server that takes due events holds them until
        // `leased_until`, so servers sharing the database do not send the same event twice; a
        // lease left by a server that died expires and the event is due again.
        LedgerMigration(id: "0005_event_leases") { _ in
            [
                """
                CREATE TABLE event_leases (
                    event_id BIGINT NOT NULL REFERENCES events (id),
                    endpoint TEXT NOT NULL,
                    leased_until BIGINT NOT NULL,
                    PRIMARY KEY (event_id, endpoint)
                )
                """
            ]
        },
        // The dashboard's sessions and used sign-in forms, by the SHA-256 of their token, so that
        // every server sharing the database knows them and a sign-out ends a session everywhere.
        LedgerMigration(id: "0006_dashboard_tokens") { dialect in
            [
                """
                CREATE TABLE dashboard_tokens (
                    digest \(dialect.bytesType) PRIMARY KEY,
                    kind TEXT NOT NULL,
                    csrf TEXT,
                    expires_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX dashboard_tokens_by_expiry ON dashboard_tokens (expires_at)",
            ]
        },
        // Failed sign-ins (dashboard passwords, API keys) by subject (`source:ADDRESS` or
        // `account:NAME`), so that every server sharing the database counts them together and
        // makes the guesser wait the same time.
        LedgerMigration(id: "0007_sign_in_failures") { _ in
            [
                """
                CREATE TABLE sign_in_failures (
                    subject TEXT PRIMARY KEY,
                    failures INTEGER NOT NULL CHECK (failures > 0),
                    last_failure_at BIGINT NOT NULL,
                    locked_until BIGINT NOT NULL
                )
                """,
                "CREATE INDEX sign_in_failures_by_last_failure ON sign_in_failures (last_failure_at)",
            ]
        },
        // Offer signatures made for customers, by their nonce (never the same twice), and the
        // calls owed to the App Store Server API (consumption information for each
        // CONSUMPTION_REQUEST, app account tokens), each sent once with retries: `state` is
        // `pending` until sent, or `skipped` / `failed` with the reason.
        LedgerMigration(id: "0008_offers_and_apple_requests") { _ in
            [
                """
                CREATE TABLE offer_signatures (
                    nonce TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    app_user_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    offer_id TEXT,
                    kind TEXT NOT NULL,
                    key_id TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX offer_signatures_by_created ON offer_signatures (created_at)",
                """
                CREATE TABLE apple_requests (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    transaction_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    detail TEXT,
                    requested_at BIGINT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'skipped', 'failed')),
                    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
                    next_attempt_at BIGINT NOT NULL,
                    leased_until BIGINT NOT NULL DEFAULT 0,
                    sent_body TEXT,
                    last_error TEXT,
                    finished_at BIGINT
                )
                """,
                "CREATE INDEX apple_requests_due ON apple_requests (state, next_attempt_at)",
            ]
        },
        // The refunded share of a revoked transaction in milliunits of a percent (Apple's
        // `revocationPercentage`): a prorated refund takes back part of a consumable's credit, and a
        // later, larger refund of the same transaction takes back only the rest. NULL on a revoked
        // row means the whole transaction (rows revoked before it, refunds without a percentage,
        // family sharing revocations).
        LedgerMigration(id: "0009_revocation_percentage") { _ in
            [
                """
                ALTER TABLE transactions ADD COLUMN revocation_percentage INTEGER
                CHECK (revocation_percentage BETWEEN 1 AND 100000)
                """
            ]
        },
        // Which customer each app download belongs to, as the SDK reports it (its app transaction,
        // verified): a transaction that reaches the server without an owner is given the
        // customer of its `appTransactionId`. The latest customer to report a download wins.
        LedgerMigration(id: "0010_app_transactions") { _ in
            [
                """
                CREATE TABLE app_transactions (
                    bundle_id TEXT NOT NULL,
                    app_transaction_id TEXT NOT NULL,
                    app_user_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    linked_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, app_transaction_id)
                )
                """
            ]
        },
        // Which identified customer each anonymous customer became when the app signed in: the
        // anonymous customer's purchases and balances were moved to `app_user_id`, and requests that
        // still name the anonymous ID are served for it. An anonymous ID becomes one customer only.
        LedgerMigration(id: "0011_customer_aliases") { _ in
            [
                """
                CREATE TABLE customer_aliases (
                    bundle_id TEXT NOT NULL,
                    alias TEXT NOT NULL,
                    app_user_id TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, alias),
                    CHECK (alias <> app_user_id)
                )
                """,
                "CREATE INDEX customer_aliases_by_customer ON customer_aliases (bundle_id, app_user_id)",
            ]
        },
        // The period type Apple signs in a subscription's transactions (trial, introductory offer,
        // promotional or win-back offer, full price), and the renewal state its notifications
        // report: whether it will renew, why it expired, billing problems and grace periods.
        LedgerMigration(id: "0012_subscription_renewals") { _ in
            [
                """
                ALTER TABLE transactions ADD COLUMN period_type TEXT
                CHECK (period_type IN ('trial', 'intro', 'offer', 'normal'))
                """,
                """
                CREATE TABLE subscription_renewals (
                    bundle_id TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    auto_renew_status INTEGER,
                    expiration_intent INTEGER,
                    billing_issue_detected_at BIGINT,
                    grace_period_expires_at BIGINT,
                    signed_date BIGINT NOT NULL,
                    notification_uuid TEXT,
                    updated_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, original_transaction_id),
                    CHECK (billing_issue_detected_at IS NOT NULL OR grace_period_expires_at IS NULL)
                )
                """,
            ]
        },
        // How far reconciliation has read Apple's notification history, per app and environment:
        // the next run reads from there (less a little overlap) instead of walking every purchase.
        LedgerMigration(id: "0013_notification_checkpoints") { _ in
            [
                """
                CREATE TABLE notification_checkpoints (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    read_until BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, environment)
                )
                """
            ]
        },
        // The figures the dashboard's overview reads, kept per app, UTC day (days since 1970-01-01),
        // product, currency and environment in the same transaction as each write (see
        // `DailyFigures`), and filled in here from the rows held. The price Apple signs is kept on
        // each transaction; rows recorded before have none, and the pass named in `ledger_backfills`
        // reads it from their stored JWS after migrating, page by page, and adds their revenue.
        // Indexes for the customers page: newest purchases first, and app user IDs by prefix in any
        // case.
        LedgerMigration(id: "0014_daily_figures") { dialect in
            let end = """
                CASE WHEN revocation_date IS NOT NULL AND revocation_date < expires_date \
                THEN revocation_date ELSE expires_date END
                """
            let subscription = """
                product_type = 'Auto-Renewable Subscription' AND expires_date IS NOT NULL AND \
                \(end) > purchase_date
                """
            return [
                "ALTER TABLE transactions ADD COLUMN price BIGINT",
                "ALTER TABLE transactions ADD COLUMN currency TEXT",
                """
                CREATE TABLE daily_figures (
                    bundle_id TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    product_id TEXT NOT NULL,
                    currency TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    purchases INTEGER NOT NULL DEFAULT 0,
                    refunds INTEGER NOT NULL DEFAULT 0,
                    revenue BIGINT NOT NULL DEFAULT 0,
                    subscription_starts INTEGER NOT NULL DEFAULT 0,
                    subscription_ends INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (bundle_id, day, product_id, currency, environment)
                )
                """,
                """
                INSERT INTO daily_figures (bundle_id, day, product_id, currency, environment, purchases, refunds,
                    revenue, subscription_starts, subscription_ends)
                SELECT bundle_id, day, product_id, '', environment, SUM(purchases), SUM(refunds), 0, SUM(starts),
                    SUM(ends)
                FROM (
                    SELECT bundle_id, purchase_date / 86400000 AS day, product_id, environment, 1 AS purchases,
                        0 AS refunds, CASE WHEN \(subscription) THEN 1 ELSE 0 END AS starts, 0 AS ends
                    FROM transactions
                    UNION ALL
                    SELECT bundle_id, revocation_date / 86400000, product_id, environment, 0, 1, 0, 0
                    FROM transactions WHERE revocation_date IS NOT NULL
                    UNION ALL
                    SELECT bundle_id, (\(end)) / 86400000, product_id, environment, 0, 0, 0, 1
                    FROM transactions WHERE \(subscription)
                ) contributions
                GROUP BY bundle_id, day, product_id, environment
                """,
                """
                CREATE TABLE ledger_backfills (
                    name TEXT PRIMARY KEY,
                    after_key TEXT NOT NULL,
                    finished_at BIGINT
                )
                """,
                "INSERT INTO ledger_backfills (name, after_key) VALUES ('transaction_prices', '')",
                "CREATE INDEX transactions_by_purchase ON transactions (purchase_date, transaction_id)",
                """
                CREATE INDEX transactions_by_user_prefix
                ON transactions ((lower(app_user_id)) COLLATE \(dialect.bytewiseCollation), bundle_id, app_user_id)
                """,
            ]
        },
        // Reconciliation runs are recorded when they start and brought up to date as they go, so
        // that a run started on demand can be followed; the runs recorded before are kept. The
        // subscriptions whose period ended are found by the end of their period.
        LedgerMigration(id: "0015_reconciliation_progress") { dialect in
            [
                """
                CREATE TABLE reconciliation_runs_v2 (
                    id \(dialect.generatedPrimaryKey),
                    bundle_id TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('running', 'completed', 'failed')),
                    started_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    finished_at BIGINT,
                    notifications_read INTEGER NOT NULL DEFAULT 0 CHECK (notifications_read >= 0),
                    notifications_new INTEGER NOT NULL DEFAULT 0 CHECK (notifications_new >= 0),
                    subscriptions_checked INTEGER NOT NULL DEFAULT 0 CHECK (subscriptions_checked >= 0),
                    histories_read INTEGER NOT NULL DEFAULT 0 CHECK (histories_read >= 0),
                    transactions_seen INTEGER NOT NULL DEFAULT 0 CHECK (transactions_seen >= 0),
                    transactions_recorded INTEGER NOT NULL DEFAULT 0 CHECK (transactions_recorded >= 0),
                    transactions_revoked INTEGER NOT NULL DEFAULT 0 CHECK (transactions_revoked >= 0),
                    failure TEXT,
                    CHECK ((state = 'running') = (finished_at IS NULL)),
                    CHECK (finished_at IS NULL OR finished_at >= started_at)
                )
                """,
                """
                INSERT INTO reconciliation_runs_v2 (bundle_id, state, started_at, updated_at, finished_at,
                    transactions_seen, transactions_recorded, transactions_revoked, failure)
                SELECT bundle_id, CASE WHEN failure IS NULL THEN 'completed' ELSE 'failed' END, started_at,
                    finished_at, finished_at, transactions_seen, transactions_recorded, transactions_revoked, failure
                FROM reconciliation_runs ORDER BY id
                """,
                "DROP TABLE reconciliation_runs",
                "ALTER TABLE reconciliation_runs_v2 RENAME TO reconciliation_runs",
                // One run of an app goes on at a time, whichever server started it.
                "CREATE UNIQUE INDEX reconciliation_runs_running ON reconciliation_runs (bundle_id) WHERE state = 'running'",
                """
                CREATE INDEX transactions_by_expiry ON transactions (bundle_id, environment, expires_date)
                WHERE expires_date IS NOT NULL
                """,
            ]
        },
        // Webhook deliveries are claimed from a mark per endpoint below which every event was
        // attempted, and failed attempts from the index of due retries: a claim reads the events in
        // flight, not every event ever delivered. On PostgreSQL the mark is a transaction ID: events
        // become visible in the order their transactions commit, not in the order of their IDs, and
        // only the events of transactions older than every running one are final. Events written
        // before have position zero.
        LedgerMigration(id: "0016_event_cursors") { dialect in
            switch dialect {
            case .sqlite:
                ["CREATE TABLE event_cursors (endpoint TEXT PRIMARY KEY, attempted_below BIGINT NOT NULL)"]
            case .postgresql:
                [
                    "ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT '0'",
                    "ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id()",
                    "CREATE INDEX events_by_transaction ON events (xid, id)",
                    "CREATE TABLE event_cursors (endpoint TEXT PRIMARY KEY, attempted_below xid8 NOT NULL)",
                ]
            }
        },
        // What a customer's summary reads, in indexes that hold no more: the transactions that can
        // grant access (a customer's consumables are not read to find there are none), and, on
        // SQLite, the transaction and owner of a signed JWS in the index by its digest, so that a
        // duplicate is answered without reading its row. (PostgreSQL reads a duplicate's row.)
        LedgerMigration(id: "0017_summary_indexes") { dialect in
            let access = """
                CREATE INDEX transactions_granting_access
                ON transactions (bundle_id, app_user_id, purchase_date, transaction_id)
                WHERE product_type <> 'Consumable'
                """
            switch dialect {
            case .sqlite:
                return [
                    access,
                    """
                    CREATE INDEX transactions_owner_by_signed_digest
                    ON transactions (signed_digest, transaction_id, bundle_id, environment, app_user_id)
                    """,
                    "DROP INDEX transactions_by_signed_digest",
                ]
            case .postgresql:
                return [access]
            }
        },
        // The subscription metrics: what each original transaction ID (a subscription, or a
        // purchase of another kind) contributes is worked out again whenever one of its
        // transactions changes, by a job that claims the IDs the writes mark in `metric_pending`
        // and adds the difference from what it contributed before (kept in `metric_units`; the
        // first payment of each paying customer in `metric_customers`) to the rollups: per app, environment, UTC day,
        // product, storefront and currency in `metric_days`, per monthly cohort in
        // `metric_cohorts`, and the periods of paid service and free trials in `metric_runs`,
        // which churn and trial conversion read. Every grace period Apple reports is kept in
        // `metric_grace`. Every purchase held is marked for the job here.
        LedgerMigration(id: "0018_metrics") { _ in
            [
                """
                CREATE TABLE metric_pending (
                    bundle_id TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, original_transaction_id)
                )
                """,
                """
                CREATE TABLE metric_grace (
                    bundle_id TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    period_expires_at BIGINT,
                    PRIMARY KEY (bundle_id, original_transaction_id, expires_at)
                )
                """,
                """
                CREATE TABLE metric_units (
                    bundle_id TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    customer TEXT NOT NULL,
                    record TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, original_transaction_id)
                )
                """,
                "CREATE INDEX metric_units_by_customer ON metric_units (bundle_id, environment, customer)",
                """
                CREATE TABLE metric_customers (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    customer TEXT NOT NULL,
                    state TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, environment, customer)
                )
                """,
                """
                CREATE TABLE metric_days (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    product_id TEXT NOT NULL,
                    storefront TEXT NOT NULL,
                    currency TEXT NOT NULL,
                    \(MetricStatements.dayColumns.map { "\($0) BIGINT NOT NULL DEFAULT 0," }.joined(separator: "\n"))
                    PRIMARY KEY (bundle_id, environment, day, product_id, storefront, currency)
                )
                """,
                """
                CREATE TABLE metric_cohorts (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    cohort INTEGER NOT NULL,
                    month_offset INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    value BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, environment, kind, cohort, month_offset, currency)
                )
                """,
                """
                CREATE TABLE metric_runs (
                    bundle_id TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('paid', 'trial')),
                    start_at BIGINT NOT NULL,
                    end_at BIGINT NOT NULL,
                    product_id TEXT NOT NULL,
                    storefront TEXT NOT NULL,
                    converted INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (bundle_id, original_transaction_id, kind, start_at)
                )
                """,
                "CREATE INDEX metric_runs_by_end ON metric_runs (bundle_id, environment, kind, end_at)",
                """
                INSERT INTO metric_pending (bundle_id, original_transaction_id)
                SELECT DISTINCT bundle_id, original_transaction_id FROM transactions
                """,
                """
                INSERT INTO metric_grace (bundle_id, original_transaction_id, expires_at)
                SELECT bundle_id, original_transaction_id, grace_period_expires_at FROM subscription_renewals
                WHERE grace_period_expires_at IS NOT NULL
                """,
            ]
        },
        // When Apple last reversed a refund of the transaction (REFUND_REVERSED): the reversal's
        // signed date. A reversal reinstates a revocation dated before it; a revocation dated no
        // later than the reversal is one it reversed, and is not applied again.
        LedgerMigration(id: "0019_refund_reversals") { _ in
            ["ALTER TABLE transactions ADD COLUMN revocation_reversed_at BIGINT"]
        },
        // The apps a dashboard session opens: `*` for every app (the operator key), or a JSON array
        // of bundle IDs (an app's secret key); NULL for a used sign-in form. Sessions started
        // before were not told which apps they open: they end, and their operators sign in again.
        LedgerMigration(id: "0021_dashboard_session_apps") { _ in
            [
                "DELETE FROM dashboard_tokens WHERE kind = 'session'",
                "ALTER TABLE dashboard_tokens ADD COLUMN apps TEXT CHECK (apps IS NULL OR apps <> '')",
            ]
        },
        // Spend keys are per app: a spend's line is keyed `spend:<bundle ID>:<key>`, no longer
        // `spend:<key>`, which every app shared. The lines written before are keyed again the new
        // way, through a prefix no key has (so that no line meets another's new key half-way).
        LedgerMigration(id: "0022_spend_keys_per_app") { _ in
            [
                """
                UPDATE ledger_entries
                SET idempotency_key = 'spend-per-app:' || bundle_id || ':' || substr(idempotency_key, 7)
                WHERE kind = 'spend' AND substr(idempotency_key, 1, 6) = 'spend:'
                """,
                """
                UPDATE ledger_entries SET idempotency_key = 'spend:' || substr(idempotency_key, 15)
                WHERE kind = 'spend' AND substr(idempotency_key, 1, 14) = 'spend-per-app:'
                """,
            ]
        },
        // Purchases other than subscriptions are kept in the metrics by the writes that change
        // them, no longer by the job: the pass named here (run after migrating, before the first
        // write) has the job work out those still marked as before, then drops their
        // `metric_units` rows.
        LedgerMigration(id: "0023_purchase_metrics_in_write") { _ in
            ["INSERT INTO ledger_backfills (name, after_key) VALUES ('purchase_metrics_in_write', '')"]
        },
        // What a write changes in the rollups is appended to `metric_day_changes` and
        // `metric_cohort_changes`, rows without a shared key that no two writers contend for; the
        // metrics job folds them into `metric_days` and `metric_cohorts` in batches, in id order.
        LedgerMigration(id: "0024_metric_changes") { dialect in
            [
                """
                CREATE TABLE metric_day_changes (
                    id \(dialect.generatedPrimaryKey),
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    product_id TEXT NOT NULL,
                    storefront TEXT NOT NULL,
                    \(MetricStatements.dayColumns.map { "\($0) BIGINT NOT NULL DEFAULT 0," }.joined(separator: "\n"))
                    currency TEXT NOT NULL
                )
                """,
                """
                CREATE TABLE metric_cohort_changes (
                    id \(dialect.generatedPrimaryKey),
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    cohort INTEGER NOT NULL,
                    month_offset INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    value BIGINT NOT NULL
                )
                """,
            ]
        },
        // Parents' withdrawals of consent for a minor's use of an app (RESCIND_CONSENT): the
        // latest one per app download, and the customer it was linked to, read by customer.
        LedgerMigration(id: "0025_consent_rescissions") { _ in
            [
                """
                CREATE TABLE consent_rescissions (
                    bundle_id TEXT NOT NULL,
                    app_transaction_id TEXT NOT NULL,
                    app_user_id TEXT,
                    environment TEXT NOT NULL,
                    rescinded_at BIGINT NOT NULL,
                    notification_uuid TEXT NOT NULL,
                    recorded_at BIGINT NOT NULL,
                    erased TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, app_transaction_id)
                )
                """,
                """
                CREATE INDEX consent_rescissions_by_customer
                ON consent_rescissions (bundle_id, app_user_id, rescinded_at)
                """,
            ]
        },
        // The answers given to the App Store's Get Retention Message requests: one row per app and
        // request identifier (a request sent again is recorded once), read by app and time, and by
        // subscription. Whether the subscriber stayed is worked out when read.
        LedgerMigration(id: "0026_retention_decisions") { _ in
            [
                """
                CREATE TABLE retention_decisions (
                    decision_id TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    request_identifier TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    locale TEXT NOT NULL,
                    subscriber_state TEXT CHECK (subscriber_state IN ('trial', 'billingIssue', 'paid')),
                    rule_name TEXT,
                    choice TEXT NOT NULL CHECK (choice IN ('none', 'message', 'alternateProduct', 'promotionalOffer')),
                    message_id TEXT,
                    alternate_product_id TEXT,
                    offer_id TEXT,
                    decided_at BIGINT NOT NULL,
                    period_expires_at BIGINT,
                    UNIQUE (bundle_id, request_identifier),
                    CHECK ((choice = 'none') = (message_id IS NULL))
                )
                """,
                """
                CREATE INDEX retention_decisions_by_app
                ON retention_decisions (bundle_id, environment, decided_at, decision_id)
                """,
                """
                CREATE INDEX retention_decisions_by_subscription
                ON retention_decisions (bundle_id, original_transaction_id, decided_at)
                """,
            ]
        },
        // Stripe's events, the inbox of an app's web purchases: one row per app and event ID (an
        // event Stripe sends again is recorded once), kept as received and applied in order. The
        // event ID compares byte by byte on both engines, so events made in the same second are
        // applied in the same order everywhere. Whether an event is of live mode is 0 or 1. The
        // events still to apply are read through a partial index, in the order they are applied;
        // the newest event of an app (the reconciliation's checkpoint) through the index by time.
        LedgerMigration(id: "0027_stripe_events") { dialect in
            [
                """
                CREATE TABLE stripe_events (
                    bundle_id TEXT NOT NULL,
                    event_id TEXT COLLATE \(dialect.bytewiseCollation) NOT NULL,
                    type TEXT NOT NULL,
                    object_id TEXT,
                    livemode INTEGER NOT NULL CHECK (livemode IN (0, 1)),
                    created_at BIGINT NOT NULL,
                    received_at BIGINT NOT NULL,
                    payload TEXT NOT NULL,
                    applied_at BIGINT,
                    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
                    failure TEXT,
                    PRIMARY KEY (bundle_id, event_id),
                    CHECK (failure IS NULL OR (applied_at IS NULL AND attempts > 0))
                )
                """,
                """
                CREATE INDEX stripe_events_to_apply ON stripe_events (bundle_id, created_at, event_id)
                WHERE applied_at IS NULL
                """,
                "CREATE INDEX stripe_events_by_created ON stripe_events (bundle_id, created_at)",
            ]
        },
        // Where the customer paid for each transaction: the App Store (every transaction recorded
        // before), or the app's web checkout through Stripe.
        LedgerMigration(id: "0028_transaction_store") { _ in
            [
                """
                ALTER TABLE transactions ADD COLUMN store TEXT NOT NULL DEFAULT 'appStore'
                CHECK (store IN ('appStore', 'stripe'))
                """
            ]
        },
        // The figures and the metrics' rollups are kept per store as well: `daily_figures` and
        // `metric_days` are built again with the store in their keys (a primary key cannot be
        // altered in place on SQLite), every row held being the App Store's; the rows a write
        // appends for the metrics job and the periods of service say the store too. The columns are
        // spelled out here, as they stand at this step.
        LedgerMigration(id: "0029_figures_by_store") { _ in
            let store = "store TEXT NOT NULL DEFAULT 'appStore' CHECK (store IN ('appStore', 'stripe'))"
            let figures = """
                bundle_id, day, product_id, currency, environment, purchases, refunds, revenue, \
                subscription_starts, subscription_ends
                """
            let metricKeys = "bundle_id, environment, day, product_id, storefront, currency"
            let metricValues = [
                "purchases", "revenue", "revenue_second_year", "refunds", "refunded", "refunds_for_issue",
                "refunds_prorated", "refunds_family", "paid_starts", "paid_ends", "trial_starts", "trial_ends",
                "family_starts", "family_ends", "mrr_starts", "mrr_ends", "trials_started", "trials_converted",
                "new_customers",
            ]
            let metricColumns = metricValues.map { "\($0) BIGINT NOT NULL DEFAULT 0," }.joined(separator: "\n")
            let metricList = metricValues.joined(separator: ", ")
            return [
                """
                CREATE TABLE daily_figures_by_store (
                    bundle_id TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    product_id TEXT NOT NULL,
                    currency TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    \(store),
                    purchases INTEGER NOT NULL DEFAULT 0,
                    refunds INTEGER NOT NULL DEFAULT 0,
                    revenue BIGINT NOT NULL DEFAULT 0,
                    subscription_starts INTEGER NOT NULL DEFAULT 0,
                    subscription_ends INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (bundle_id, day, product_id, currency, environment, store)
                )
                """,
                "INSERT INTO daily_figures_by_store (\(figures), store) SELECT \(figures), 'appStore' FROM daily_figures",
                "DROP TABLE daily_figures",
                "ALTER TABLE daily_figures_by_store RENAME TO daily_figures",
                """
                CREATE TABLE metric_days_by_store (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    product_id TEXT NOT NULL,
                    storefront TEXT NOT NULL,
                    currency TEXT NOT NULL,
                    \(store),
                    \(metricColumns)
                    PRIMARY KEY (bundle_id, environment, day, product_id, storefront, currency, store)
                )
                """,
                """
                INSERT INTO metric_days_by_store (\(metricKeys), store, \(metricList))
                SELECT \(metricKeys), 'appStore', \(metricList) FROM metric_days
                """,
                "DROP TABLE metric_days",
                "ALTER TABLE metric_days_by_store RENAME TO metric_days",
                "ALTER TABLE metric_day_changes ADD COLUMN \(store)",
                "ALTER TABLE metric_runs ADD COLUMN \(store)",
            ]
        },
        // Apple's signed JWS are base64url text that does not compress: PostgreSQL's default for a
        // long value tried to compress each one (and kept it uncompressed after the work) before
        // moving it out of the row. They are moved out of the row without that attempt (from the
        // next row written: the rows held are not rewritten). SQLite stores text as it comes.
        LedgerMigration(id: "0030_jws_uncompressed") { dialect in
            switch dialect {
            case .sqlite:
                []
            case .postgresql:
                [
                    "ALTER TABLE transactions ALTER COLUMN signed_transaction SET STORAGE EXTERNAL",
                    "ALTER TABLE notifications ALTER COLUMN signed_payload SET STORAGE EXTERNAL",
                ]
            }
        },
        // A lease names who holds it. A server whose claim committed but whose answer was lost
        // (its connection to the database failed as the claim committed) takes back what it holds
        // at its next run, instead of waiting for the lease to end; others wait as before. Leases
        // taken before hold for no one in particular.
        LedgerMigration(id: "0031_lease_holders") { _ in
            [
                "ALTER TABLE event_leases ADD COLUMN holder TEXT NOT NULL DEFAULT ''",
                "ALTER TABLE apple_requests ADD COLUMN leased_by TEXT NOT NULL DEFAULT ''",
            ]
        },
        // A JWS's header carries the signer's certificate chain, most of its bytes, the same for
        // every transaction signed with one key: it is stored once, by the SHA-256 of its text, and
        // a row written from now on keeps the rest of its JWS and the header's digest (rows held
        // keep their whole JWS, `signed_header` NULL). There is no foreign key: every insert would
        // lock the one header row it names on PostgreSQL; headers are never deleted.
        LedgerMigration(id: "0032_signed_headers") { dialect in
            [
                "CREATE TABLE signed_headers (digest \(dialect.bytesType) PRIMARY KEY, header TEXT NOT NULL)",
                "ALTER TABLE transactions ADD COLUMN signed_header \(dialect.bytesType)",
            ]
        },
    ]
}
