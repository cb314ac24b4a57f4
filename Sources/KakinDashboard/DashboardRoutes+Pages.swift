import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinCore
import KakinServer
import KakinLedger
import Hummingbird

/// The pages over the ledger: overview, customers, one customer, activity.
extension DashboardRoutes {
    /// How many days the overview's charts cover.
    static let overviewDays = 30

    func overviewPage(_ request: Request, _ session: DashboardSessions.Session) async throws -> Page {
        let moment = now()
        let today = DailyFigures.day(of: moment)
        let first = today - (Self.overviewDays - 1)
        let choice = MetricsChoice(request, today: today)
        var apps: [OverviewView.App] = []
        for bundleID in self.apps(of: session) {
            // The figures kept with each write: one row per day, product, currency, environment and store.
            let period = try await service.dailyFigures(bundleID: bundleID, days: first..<(today + 1), now: moment)
            var app = DashboardOverview(period: period, firstDay: first, days: Self.overviewDays, today: today)
                .view(bundleID: bundleID)
            app.metrics = try await metricsPanel(bundleID: bundleID, choice: choice)
            apps.append(app)
        }
        return Page(
            template: "overview",
            view: OverviewView(
                days: Self.overviewDays, today: DashboardFormat.day(DailyFigures.start(ofDay: today)),
                scope: session.scope == .allApps
                    ? "every app (operator key)"
                    : apps.isEmpty ? "no app this server serves" : apps.map(\.bundleID).joined(separator: ", "),
                choice: choice.view, apps: apps),
            title: "Overview", current: "overview")
    }

    func customersPage(_ request: Request, _ session: DashboardSessions.Session) async throws -> Page {
        let query = (request.uri.queryParameters.get("q") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let matches = try await customers(matching: String(query.prefix(256)), limit: 50, session: session)
        let rows = matches.map { match in
            CustomersView.Match(
                appUserID: match.appUserID, bundleID: match.bundleID, transactionCount: match.transactionCount,
                lastPurchase: DashboardFormat.time(match.lastPurchaseDate),
                link: Self.customerLink(bundleID: match.bundleID, appUserID: match.appUserID))
        }
        let heading =
            query.isEmpty ? "Recent customers" : "\(matches.count) match\(matches.count == 1 ? "" : "es") for “\(query)”"
        return Page(
            template: "customers",
            view: CustomersView(query: query, heading: heading, matches: rows, hasMatches: !rows.isEmpty),
            title: "Customers", current: "customers")
    }

    /// The customers matching `query` among the apps the session opens: one search over every app
    /// for the operator key's session, one per app otherwise, merged newest purchase first.
    func customers(
        matching query: String, limit: Int, session: DashboardSessions.Session
    ) async throws -> [CustomerMatch] {
        if session.scope == .allApps { return try await service.findCustomers(matching: query, limit: limit) }
        var matches: [CustomerMatch] = []
        for bundleID in apps(of: session) {
            matches += try await service.findCustomers(matching: query, limit: limit, bundleID: bundleID)
        }
        return Array(
            matches.sorted {
                ($1.lastPurchaseDate, $0.appUserID, $0.bundleID) < ($0.lastPurchaseDate, $1.appUserID, $1.bundleID)
            }.prefix(limit))
    }

    static func customerLink(bundleID: String, appUserID: String) -> String {
        var components = URLComponents()
        components.path = "/dashboard/customer"
        components.queryItems = [URLQueryItem(name: "app", value: bundleID), URLQueryItem(name: "user", value: appUserID)]
        return (components.string ?? "/dashboard/customers").replacingOccurrences(of: "+", with: "%2B")
    }

    func customerPage(_ request: Request, _ session: DashboardSessions.Session) async throws -> Page {
        let query = request.uri.queryParameters
        guard let bundleID = query.get("app"), let appUserID = query.get("user"), !appUserID.isEmpty else {
            throw DashboardNotFound(message: "Name a customer: /dashboard/customer?app=BUNDLE_ID&user=APP_USER_ID.")
        }
        // An app the session does not open is answered as one that is not there.
        guard service.apps[bundleID] != nil, session.scope.opens(bundleID) else {
            throw DashboardNotFound(message: "No app \(bundleID) is open to this session.")
        }
        let state = try await service.customer(bundleID: bundleID, appUserID: appUserID)
        let (notifications, deliveries, downloads) = try await service.activity(
            bundleID: bundleID, appUserID: appUserID, limit: 200)
        guard !state.transactions.isEmpty || !state.ledger.isEmpty || !deliveries.isEmpty || !downloads.isEmpty else {
            throw DashboardNotFound(message: "The ledger has nothing for \(appUserID) in \(bundleID).")
        }
        var view = CustomerView(
            state: state, notifications: notifications, deliveries: deliveries, now: now())
        view.downloads = downloads.map {
            CustomerView.Download(appTransactionID: $0.appTransactionID, linkedAt: DashboardFormat.time($0.linkedAt))
        }
        view.hasDownloads = !downloads.isEmpty
        return Page(template: "customer", view: view, title: "Customer \(appUserID)", current: "customers")
    }

    func activityPage(_ session: DashboardSessions.Session) async throws -> Page {
        let (notifications, deliveries, runs, calls, offers) = try await activity(session).lists
        let view = ActivityView(
            notifications: notifications.map(ActivityView.Notification.init), hasNotifications: !notifications.isEmpty,
            endpoints: !webhookEndpoints.isEmpty, deliveries: deliveries.map { ActivityView.Delivery($0, now: now()) },
            hasDeliveries: !deliveries.isEmpty, runs: runs.map(ActivityView.Run.init), hasRuns: !runs.isEmpty,
            canReconcile: !reconcilableApps(session).isEmpty,
            calls: calls.map(ActivityView.Call.init), hasCalls: !calls.isEmpty,
            offers: offers.map(ActivityView.Offer.init), hasOffers: !offers.isEmpty)
        return Page(template: "activity", view: view, title: "Activity", current: "activity")
    }

    /// What the activity page lists, of the apps the session opens: read across every app for the
    /// operator key's session, app by app otherwise.
    private func activity(_ session: DashboardSessions.Session) async throws -> ActivityReads {
        let bundleIDs: [String?] = session.scope == .allApps ? [nil] : apps(of: session)
        var all = ActivityReads(merged: bundleIDs.count > 1)
        for bundleID in bundleIDs {
            let (notifications, deliveries, _) = try await service.activity(
                bundleID: bundleID, appUserID: nil, limit: 100)
            let (runs, calls, offers) = try await service.operations(runs: 50, limit: 100, bundleID: bundleID)
            all.notifications += notifications
            all.deliveries += deliveries
            all.runs += runs
            all.calls += calls
            all.offers += offers
        }
        return all
    }
}

/// What the activity page reads from the ledger, newest first: as read, or, when `merged` from
/// several apps' reads, sorted again and cut to the page's lengths.
struct ActivityReads {
    let merged: Bool
    var notifications: [ReceivedNotification] = []
    var deliveries: [WebhookDelivery] = []
    var runs: [ReconciliationRun] = []
    var calls: [AppleRequestRecord] = []
    var offers: [OfferSignatureRecord] = []

    var lists: (
        [ReceivedNotification], [WebhookDelivery], [ReconciliationRun], [AppleRequestRecord], [OfferSignatureRecord]
    ) {
        guard merged else { return (notifications, deliveries, runs, calls, offers) }
        return (
            Array(notifications.sorted { $0.receivedAt > $1.receivedAt }.prefix(100)),
            Array(deliveries.sorted { ($0.eventID, $0.endpoint ?? "") > ($1.eventID, $1.endpoint ?? "") }.prefix(100)),
            Array(runs.sorted { $0.id > $1.id }.prefix(50)),
            Array(calls.sorted { $0.requestedAt > $1.requestedAt }.prefix(100)),
            Array(offers.sorted { $0.createdAt > $1.createdAt }.prefix(100))
        )
    }
}

/// Dates and amounts as the dashboard shows them: UTC, minutes, two decimals.
enum DashboardFormat {
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    static func time(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(
            format: "%04d-%02d-%02d %02d:%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0,
            parts.minute ?? 0)
    }

    static func day(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    static func shortDay(_ date: Date) -> String {
        let parts = calendar.dateComponents([.month, .day], from: date)
        return String(format: "%02d-%02d", parts.month ?? 0, parts.day ?? 0)
    }

    static func amount(_ value: Double) -> String {
        String(format: "%.2f", value)
    }
}

struct OverviewView {
    struct Total {
        var currency: String
        var amount: String
    }
    struct Chart {
        var currency: String
        var svg: String
    }
    struct App {
        var bundleID: String
        var purchases: Int
        var refunds: Int
        var activeSubscriptions: Int
        var revenueTotals: [Total]
        var revenueCharts: [Chart]
        var subscriptionsSVG: String
        /// The figures split by the store the customers paid in, when any was paid outside the
        /// App Store.
        var stores: [StoreFigures] = []
        var hasStores = false
        var metrics: Metrics?
    }
    /// One store's share of an app's figures over the days shown.
    struct StoreFigures {
        var store: String
        var name: String
        var purchases: Int
        var refunds: Int
        var activeSubscriptions: Int
        var revenue: String
    }
    var days: Int
    var today: String
    /// The apps the session opens, as a phrase.
    var scope: String
    var choice: Choice
    var apps: [App]
}

/// The overview's figures for one app over its days, read from the figures the ledger keeps with
/// each write (`DailyFigures`).
struct DashboardOverview {
    var purchases = 0
    var refunds = 0
    /// Revenue per day index by currency, in currency units (price × quantity).
    var revenue: [String: [Double]] = [:]
    /// Subscriptions active at the end of each day; at the moment read for today.
    var activeSubscriptions: [Int]
    let start: Date
    let days: Int
    /// Subscriptions active at the moment read.
    let activeNow: Int
    /// The figures of each store over the days.
    var stores: [PurchaseStore: StoreTotals] = [:]

    /// A store's figures over the days: counts, and revenue by currency in currency units.
    struct StoreTotals {
        var purchases = 0
        var refunds = 0
        var revenue: [String: Double] = [:]
        var activeNow = 0
    }

    /// The figures of the `days` days from the one numbered `firstDay`; `today` is the day of the
    /// moment `period` was read at.
    init(period: DailyFiguresPeriod, firstDay: Int, days: Int, today: Int) {
        start = DailyFigures.start(ofDay: firstDay)
        self.days = days
        var changes = [Int](repeating: 0, count: days)
        for figures in period.figures {
            let index = figures.day - firstDay
            guard (0..<days).contains(index) else { continue }
            purchases += figures.purchases
            refunds += figures.refunds
            stores[figures.store, default: StoreTotals()].purchases += figures.purchases
            stores[figures.store, default: StoreTotals()].refunds += figures.refunds
            if let currency = figures.currency {
                revenue[currency, default: [Double](repeating: 0, count: days)][index] +=
                    Double(figures.revenue) / 1000
                stores[figures.store, default: StoreTotals()].revenue[currency, default: 0] +=
                    Double(figures.revenue) / 1000
            }
            changes[index] += figures.subscriptionStarts - figures.subscriptionEnds
        }
        var active = period.subscriptionsActiveBefore
        activeSubscriptions = changes.map { change in
            active += change
            return active
        }
        if (0..<days).contains(today - firstDay) { activeSubscriptions[today - firstDay] = period.subscriptionsActiveNow }
        activeNow = period.subscriptionsActiveNow
        for (store, active) in period.subscriptionsActiveNowByStore {
            stores[store, default: StoreTotals()].activeNow = active
        }
        stores = stores.filter { $0.value.purchases != 0 || $0.value.refunds != 0 || $0.value.activeNow != 0 }
    }

    /// How the overview names a store.
    static func name(_ store: PurchaseStore) -> String {
        switch store {
        case .appStore: "App Store"
        case .stripe: "Web (Stripe)"
        }
    }

    func view(bundleID: String) -> OverviewView.App {
        let labels = (0..<days).map { DashboardFormat.shortDay(start.addingTimeInterval(Double($0) * 86_400)) }
        let currencies = revenue.keys.sorted()
        let split = PurchaseStore.allCases.compactMap { store in
            stores[store].map { totals in
                OverviewView.StoreFigures(
                    store: store.rawValue, name: Self.name(store), purchases: totals.purchases, refunds: totals.refunds,
                    activeSubscriptions: totals.activeNow,
                    revenue: totals.revenue.keys.sorted().map { "\(DashboardFormat.amount(totals.revenue[$0]!)) \($0)" }
                        .joined(separator: ", "))
            }
        }
        let hasStores = stores.keys.contains { $0 != .appStore }
        var app = OverviewView.App(
            bundleID: bundleID, purchases: purchases, refunds: refunds, activeSubscriptions: activeNow,
            revenueTotals: currencies.map {
                OverviewView.Total(currency: $0, amount: DashboardFormat.amount(revenue[$0, default: []].reduce(0, +)))
            },
            revenueCharts: currencies.map { currency in
                OverviewView.Chart(
                    currency: currency,
                    svg: DashboardCharts.bars(
                        zip(labels, revenue[currency, default: []]).map { DashboardCharts.Point(label: $0, value: $1) },
                        title: "Revenue per day in \(currency)", format: DashboardFormat.amount))
            },
            subscriptionsSVG: DashboardCharts.line(
                zip(labels, activeSubscriptions).map { DashboardCharts.Point(label: $0, value: Double($1)) },
                title: "Active subscriptions per day", format: { String(Int($0)) }))
        (app.stores, app.hasStores) = (hasStores ? split : [], hasStores)
        return app
    }
}

struct CustomersView {
    struct Match {
        var appUserID: String
        var bundleID: String
        var transactionCount: Int
        var lastPurchase: String
        var link: String
    }
    var query: String
    var heading: String
    var matches: [Match]
    var hasMatches: Bool
}

struct CustomerView {
    /// An entitlement as the customer page shows it: a projection of ``Entitlement`` for the template.
    struct EntitlementRow {
        var identifier: String
        var productID: String
        var state: String
        var until: String?
        /// The App Store environment that granted it (`Production`, `Sandbox`); empty when unknown.
        var environment: String
        /// Whether a sandbox account's purchase grants it (it cost nothing).
        var isSandbox: Bool
        /// Where the customer paid: `App Store` or `web`.
        var store: String
    }
    /// An entitlement the customer pays for in two stores, and the subscriptions that give it.
    struct Duplicate {
        var identifier: String
        var subscriptions: String
    }
    var duplicates: [Duplicate] = []
    struct Balance {
        var currency: String
        var amount: Int64
    }
    struct Event {
        var date: String
        var kind: String
        var label: String
        var details: String
        var sortDate: Date
        var order: Int
    }
    var bundleID: String
    var appUserID: String
    var transactionCount: Int
    var entitlements: [EntitlementRow]
    var hasEntitlements: Bool
    var balances: [Balance]
    var hasBalances: Bool
    var timeline: [Event]
    /// An app download linked to the customer: purchases of it that arrive without an owner are theirs.
    struct Download {
        var appTransactionID: String
        var linkedAt: String
    }
    var downloads: [Download] = []
    var hasDownloads = false
    /// The mark of a parent's withdrawal of consent (`RESCIND_CONSENT`): when, whether it still
    /// stands, and what was erased; `nil` without one.
    struct Consent {
        var rescindedAt: String
        var stands: Bool
        var erased: String
        var appTransactionID: String
    }
    var consent: Consent?

    init(state: EntitledCustomer, notifications: [ReceivedNotification], deliveries: [WebhookDelivery], now: Date) {
        bundleID = state.bundleID
        appUserID = state.appUserID
        transactionCount = state.transactions.count
        entitlements = state.entitlements.map { entitlement in
            EntitlementRow(
                identifier: entitlement.identifier, productID: entitlement.productID,
                state: entitlement.isActive
                    ? "active"
                    : entitlement.consentRescindedDate != nil
                        ? "consent-rescinded" : entitlement.revocationDate != nil ? "revoked" : "expired",
                until: entitlement.isActive ? entitlement.expiresDate.map(DashboardFormat.time) : nil,
                environment: entitlement.environment?.rawValue ?? "", isSandbox: entitlement.environment == .sandbox,
                store: entitlement.store == .stripe ? "web" : "App Store")
        }
        duplicates = state.duplicatedSubscriptions.keys.sorted().map { identifier in
            Duplicate(
                identifier: identifier,
                subscriptions: (state.duplicatedSubscriptions[identifier] ?? []).map { subscription in
                    "\(subscription.productID) (\(subscription.store == .stripe ? "web" : "App Store"), \(subscription.originalTransactionID))"
                }.joined(separator: " and "))
        }
        hasEntitlements = !entitlements.isEmpty
        consent = state.consentRescission.map { rescission in
            Consent(
                rescindedAt: DashboardFormat.time(rescission.rescindedAt),
                stands: state.consentWithheld,
                erased: rescission.erased.isEmpty ? "nothing" : rescission.erased.map(\.rawValue).joined(separator: ", "),
                appTransactionID: rescission.appTransactionID)
        }
        balances = state.balances.keys.sorted().map { Balance(currency: $0, amount: state.balances[$0] ?? 0) }
        hasBalances = !balances.isEmpty
        var events: [Event] = []
        func add(_ date: Date, _ kind: String, _ label: String, _ details: String) {
            events.append(
                Event(
                    date: DashboardFormat.time(date), kind: kind, label: label, details: details, sortDate: date,
                    order: events.count))
        }
        for transaction in state.transactions {
            var details = "\(transaction.productID) · \(transaction.transactionID)"
            if transaction.quantity > 1 { details += " × \(transaction.quantity)" }
            if transaction.transactionID != transaction.originalTransactionID {
                details += " (renews \(transaction.originalTransactionID))"
            }
            if let expires = transaction.expiresDate { details += " · expires \(DashboardFormat.time(expires))" }
            details += " · from \(transaction.source.rawValue)"
            if transaction.store == .stripe { details += " · paid on the web" }
            add(transaction.purchaseDate, "transaction", "purchase", details)
            if let revoked = transaction.revocationDate {
                let reason = transaction.revocationReason.map { " (reason \($0.rawValue))" } ?? ""
                add(revoked, "refunded", "refund", "\(transaction.productID) · \(transaction.transactionID)\(reason)")
            }
        }
        if let rescission = state.consentRescission {
            add(
                rescission.rescindedAt, "consent", "consent rescinded",
                "app download \(rescission.appTransactionID) · erased \(consent?.erased ?? "nothing")")
        }
        for line in state.ledger {
            var details = "\(line.amount > 0 ? "+" : "")\(line.amount) \(line.currency) · \(line.idempotencyKey)"
            if line.shortfall > 0 { details += " · shortfall \(line.shortfall)" }
            add(line.createdAt, "ledger", line.kind.rawValue, details)
        }
        for notification in notifications {
            let subtype = notification.subtype.map { " / \($0)" } ?? ""
            add(
                notification.receivedAt, "notification", "notification",
                "\(notification.type)\(subtype) · \(notification.transactionID ?? "no transaction")")
        }
        for delivery in deliveries {
            add(
                delivery.createdAt, "webhook", "webhook",
                "\(delivery.type) · event #\(delivery.eventID) · \(ActivityView.Delivery(delivery, now: now).state)")
        }
        timeline = events.sorted { ($0.sortDate, $0.order) > ($1.sortDate, $1.order) }
    }
}

struct ActivityView {
    struct Notification {
        var receivedAt: String
        var type: String
        var subtype: String
        var outcome: String
        var transactionID: String

        init(_ notification: ReceivedNotification) {
            receivedAt = DashboardFormat.time(notification.receivedAt)
            type = notification.type
            subtype = notification.subtype ?? ""
            transactionID = notification.transactionID ?? ""
            if notification.transactionID == nil {
                outcome = "recorded"
            } else if notification.transactionRevocationDate != nil {
                outcome = "recorded; transaction revoked"
            } else if let user = notification.appUserID {
                outcome = "recorded; transaction of \(user)"
            } else {
                outcome = "recorded; owner not known yet"
            }
        }
    }
    struct Delivery {
        var eventID: Int64
        var type: String
        var appUserID: String
        var createdAt: String
        var endpoint: String
        var state: String
        var stateClass: String
        var attempts: Int

        init(_ delivery: WebhookDelivery, now: Date) {
            eventID = delivery.eventID
            type = delivery.type
            appUserID = delivery.appUserID ?? ""
            createdAt = DashboardFormat.time(delivery.createdAt)
            endpoint = delivery.endpoint ?? ""
            attempts = delivery.attempts
            if let delivered = delivery.deliveredAt {
                state = "delivered \(DashboardFormat.time(delivered))"
                stateClass = "delivered"
            } else if delivery.endpoint == nil {
                state = "waiting for the first attempt"
                stateClass = "pending"
            } else if let next = delivery.nextAttemptAt {
                state = "retry at \(DashboardFormat.time(next))"
                stateClass = "pending"
            } else {
                state = "given up"
                stateClass = "failed"
            }
        }
    }
    struct Run {
        var id: Int64
        var startedAt: String
        /// When it ended, or when its counts were last brought up to date while it runs.
        var until: String
        var bundleID: String
        var notifications: String
        var subscriptionsChecked: Int
        var historiesRead: Int
        var seen: Int
        var recorded: Int
        var revoked: Int
        var result: String
        var stateClass: String

        init(_ run: ReconciliationRun) {
            id = run.id
            startedAt = DashboardFormat.time(run.startedAt)
            until = DashboardFormat.time(run.finishedAt ?? run.updatedAt)
            bundleID = run.bundleID
            notifications = "\(run.counts.notificationsRead) (\(run.counts.notificationsNew))"
            subscriptionsChecked = run.counts.subscriptionsChecked
            historiesRead = run.counts.historiesRead
            seen = run.counts.transactionsSeen
            recorded = run.counts.transactionsRecorded
            revoked = run.counts.transactionsRevoked
            switch run.state {
            case .running: (result, stateClass) = ("running", "pending")
            case .completed: (result, stateClass) = ("completed", "delivered")
            case .failed: (result, stateClass) = ("stopped: \(run.failure ?? "unknown")", "failed")
            }
        }
    }
    /// A call owed to the App Store Server API: consumption information or an account token.
    struct Call {
        var requestedAt: String
        var kind: String
        var bundleID: String
        var transactionID: String
        var state: String
        var stateClass: String
        var attempts: Int
        var details: String

        init(_ call: AppleRequestRecord) {
            requestedAt = DashboardFormat.time(call.requestedAt)
            kind =
                call.kind == .consumptionInformation
                ? "Consumption information" + (call.detail.map { " (\($0))" } ?? "") : "App account token"
            bundleID = call.bundleID
            transactionID = call.transactionID
            attempts = call.attempts
            switch call.state {
            case .sent:
                state = "sent \(call.finishedAt.map(DashboardFormat.time) ?? "")"
                stateClass = "delivered"
            case .pending:
                state = call.attempts == 0 ? "due" : "retry at \(DashboardFormat.time(call.nextAttemptAt))"
                stateClass = "pending"
            case .skipped:
                state = "skipped"
                stateClass = "pending"
            case .failed:
                state = "failed"
                stateClass = "failed"
            }
            details = call.state == .sent ? call.sentBody ?? "" : call.lastError ?? ""
        }
    }
    /// An offer signature made for a customer.
    struct Offer {
        var createdAt: String
        var kind: String
        var bundleID: String
        var appUserID: String
        var productID: String
        var offerID: String
        var nonce: String

        init(_ offer: OfferSignatureRecord) {
            createdAt = DashboardFormat.time(offer.createdAt)
            kind = offer.kind == .promotional ? "Promotional offer" : "Introductory eligibility"
            bundleID = offer.bundleID
            appUserID = offer.appUserID
            productID = offer.productID
            offerID = offer.offerID ?? ""
            nonce = offer.nonce
        }
    }
    var notifications: [Notification]
    var hasNotifications: Bool
    var endpoints: Bool
    var deliveries: [Delivery]
    var hasDeliveries: Bool
    var runs: [Run]
    var hasRuns: Bool
    var canReconcile: Bool
    var calls: [Call]
    var hasCalls: Bool
    var offers: [Offer]
    var hasOffers: Bool
}
