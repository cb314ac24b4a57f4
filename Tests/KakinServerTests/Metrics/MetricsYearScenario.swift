import AppStoreModels
import AppStoreSecurity
import Crypto
import Foundation
import KakinLedger
import KakinServer
import KakinTestSupport
import StoreSandbox

/// A small, seeded pseudo-random generator (SplitMix64): the same seed gives the same year.
struct SeededGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// `true` with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }

    mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }
}

/// The products of the year's catalog: the example catalog with a weekly plan (the lowest level of
/// the group, no introductory offer) and a three-month pay-up-front promotional offer on the
/// monthly plan added.
enum YearCatalog {
    static let monthly = ExampleApp.productID("premium.monthly")
    static let yearly = ExampleApp.productID("premium.yearly")
    static let weekly = ExampleApp.productID("premium.weekly")
    static let consumables = ["credits5", "credits10", "increasePoints"].map(ExampleApp.productID)
    static let removeAd = ExampleApp.productID("removeAd")
    /// Promotional offers of the monthly plan: three months at a reduced price each, or three
    /// months paid up front.
    static let comeback = "com.example.kakin.premium.monthly.comeback"
    static let quarter = "com.example.kakin.premium.monthly.quarter"
    static let winBack = "winback1"
    /// The level of each plan in the group: 1 is the highest.
    static let level = [yearly: 1, monthly: 2, weekly: 3]

    static func load() throws -> SandboxCatalog {
        let data = try Data(contentsOf: ExampleApp.storeKitFile)
        var root = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        var groups = root["subscriptionGroups"] as! [[String: Any]]
        var subscriptions = groups[0]["subscriptions"] as! [[String: Any]]
        let monthlyIndex = subscriptions.firstIndex { ($0["productID"] as? String) == monthly }!
        var monthlyProduct = subscriptions[monthlyIndex]
        var offers = monthlyProduct["adHocOffers"] as! [[String: Any]]
        offers.append([
            "displayPrice": "9.99", "internalID": "6A1F0C11", "numberOfPeriods": 1, "offerID": quarter,
            "paymentMode": "payUpFront", "referenceName": "Quarter Up Front", "subscriptionPeriod": "P3M",
        ])
        monthlyProduct["adHocOffers"] = offers
        subscriptions[monthlyIndex] = monthlyProduct
        var weeklyProduct = monthlyProduct
        weeklyProduct["productID"] = weekly
        weeklyProduct["internalID"] = "6A1F0C10"
        weeklyProduct["referenceName"] = "Premium Weekly"
        weeklyProduct["displayPrice"] = "1.49"
        weeklyProduct["groupNumber"] = 3
        weeklyProduct["recurringSubscriptionPeriod"] = "P1W"
        weeklyProduct["adHocOffers"] = [[String: Any]]()
        weeklyProduct["winbackOffers"] = [[String: Any]]()
        weeklyProduct["introductoryOffer"] = NSNull()
        weeklyProduct["localizations"] = [
            ["description": "All premium features, renewed every week.", "displayName": "Premium Weekly", "locale": "en_US"]
        ]
        subscriptions.append(weeklyProduct)
        groups[0]["subscriptions"] = subscriptions
        root["subscriptionGroups"] = groups
        let configuration = try StoreKitConfiguration.load(from: JSONSerialization.data(withJSONObject: root))
        let options = try CatalogOptions.load(
            from: Data(contentsOf: CatalogOptions.sideFileURL(for: ExampleApp.storeKitFile)))
        return try SandboxCatalog(configuration: configuration, options: options)
    }
}

/// One thing a customer does on a day of the year.
enum CustomerAction: Hashable, Sendable {
    /// Buys a plan (the first time in the group: with the free trial of its introductory offer).
    case subscribe(String)
    /// Turns auto-renewal off.
    case cancel
    /// Comes back after the subscription expired: plainly, with the win-back offer, or with a
    /// promotional offer.
    case resubscribe(String)
    case winBack
    case promotional(String)
    /// Moves to another plan of the group (an upgrade at once, a downgrade at the next renewal).
    case change(String)
    /// The card stops working; the customer fixes it (which changes nothing until a renewal failed).
    case failBilling
    case resolveBilling
    /// Asks for a refund of the current period (or of an earlier one), in full or a share of it.
    case refundCurrent(percentage: Int?, forIssue: Bool)
    case refundEarlier(percentage: Int?, forIssue: Bool)
    /// Refunds the rest of a transaction refunded in part before.
    case refundRest
    /// Shares the subscription with a family member; the member leaves the family.
    case share
    case unshare
    /// Buys a consumable (quantity) or a non-consumable.
    case consumable(String, Int)
    case refundConsumable(percentage: Int?)
}

/// A customer of the year: who, where, and what they do on which day.
struct CustomerPlan: Sendable {
    var id: String
    var storefront: String
    var familyMember: String
    var memberStorefront: String
    var actions: [(day: Int, action: CustomerAction)]
}

/// What the year's customers do, drawn from a seeded generator.
struct YearPlan: Sendable {
    static let days = 380
    var customers: [CustomerPlan] = []

    init(customers count: Int = 200, seed: UInt64 = 20_260_921) {
        var random = SeededGenerator(seed: seed)
        let lastDay = Self.days - 1
        for index in 0..<count {
            let storefront = random.chance(0.3) ? "JPN" : "USA"
            var plan = CustomerPlan(
                id: "c\(index)", storefront: storefront, familyMember: "f\(index)",
                memberStorefront: random.chance(0.8) ? storefront : (storefront == "USA" ? "JPN" : "USA"), actions: [])
            // A few customers from the first days, so that some reach a second year of paid service.
            let arrival = index < 14 ? random.int(0...3) : random.int(0...330)
            func at(_ day: Int, _ action: CustomerAction) {
                if day <= lastDay { plan.actions.append((day, action)) }
            }
            if random.chance(0.14) {
                // Buys consumables only (and now and then the non-consumable).
                var day = arrival
                for _ in 0..<random.int(1...5) {
                    at(day, .consumable(random.pick(YearCatalog.consumables), random.int(1...3)))
                    if random.chance(0.2) { at(day + random.int(0...6), .refundConsumable(percentage: random.chance(0.5) ? nil : random.int(2...9) * 10_000)) }
                    day += random.int(3...60)
                }
                if random.chance(0.3) { at(arrival + random.int(0...20), .consumable(YearCatalog.removeAd, 1)) }
                customers.append(plan)
                continue
            }
            let roll = random.int(0...99)
            let product = roll < 55 ? YearCatalog.monthly : roll < 80 ? YearCatalog.yearly : YearCatalog.weekly
            at(arrival, .subscribe(product))
            if product != YearCatalog.weekly, random.chance(0.3) {
                // The free trial lapses: auto-renewal off before its week ends.
                at(arrival + random.int(0...5), .cancel)
            }
            if random.chance(0.12) {
                // The first renewal, after the trial, fails; now and then the customer fixes it.
                at(arrival + random.int(0...5), .failBilling)
                if random.chance(0.5) { at(arrival + random.int(9...20), .resolveBilling) }
            }
            var day = arrival + random.int(5...40)
            for _ in 0..<random.int(0...4) {
                switch random.int(0...11) {
                case 0, 1:
                    at(day, .cancel)
                    if random.chance(0.85) {
                        let back = day + random.int(35...100)
                        switch random.int(0...3) {
                        case 0: at(back, .winBack)
                        case 1: at(back, .promotional(YearCatalog.comeback))
                        case 2: at(back, .promotional(YearCatalog.quarter))
                        default: at(back, .resubscribe(random.pick([YearCatalog.monthly, YearCatalog.weekly])))
                        }
                    }
                case 2: at(day, .change(YearCatalog.yearly))
                case 3: at(day, .change(YearCatalog.monthly))
                case 4: at(day, .change(YearCatalog.weekly))
                case 5, 6:
                    at(day, .failBilling)
                    if random.chance(0.7) {
                        // Tries to fix it a few times, a week apart: what works is the first try
                        // after the renewal failed.
                        let first = day + random.int(5...40)
                        for attempt in 0..<4 { at(first + attempt * 7, .resolveBilling) }
                    }
                case 7:
                    let partial = random.chance(0.5)
                    at(day, .refundCurrent(percentage: partial ? random.int(1...9) * 10_000 : nil, forIssue: random.chance(0.5)))
                    if partial, random.chance(0.4) { at(day + random.int(1...20), .refundRest) }
                case 8:
                    at(day, .refundEarlier(percentage: random.chance(0.5) ? random.int(1...9) * 10_000 : nil, forIssue: random.chance(0.5)))
                case 9, 10:
                    at(day, .share)
                    if random.chance(0.5) { at(day + random.int(10...120), .unshare) }
                default:
                    at(day, .consumable(random.pick(YearCatalog.consumables), random.int(1...2)))
                }
                day += random.int(10...90)
            }
            customers.append(plan)
        }
    }
}

/// A grace period the App Store reported: the period it failed to renew (its expiry) and when the
/// grace period ends.
struct ReportedGrace: Hashable, Sendable {
    var originalTransactionID: String
    var periodExpiry: Int64
    var graceExpiry: Int64
}

/// What happened in the year, as the App Store did it: every transaction in its final state, the
/// grace periods reported, and counts of what the customers did.
struct YearLog: Sendable {
    var transactions: [SandboxTransaction] = []
    var graces: Set<ReportedGrace> = []
    var counts: [String: Int] = [:]
    var notifications = 0
    var uploads = 0
}

/// How the year's purchases and notifications reach the server.
struct Delivery: Sendable {
    /// The day the server is restarted over its ledger (`nil`: never).
    var restartDay: Int?
    /// Every notification delivered twice, and on some days in reverse order.
    var duplicated = false
    /// Days between two runs of the metrics job (the rollups are also brought up to date at the end).
    var updateEvery = 45
}

/// Runs the year on a sandbox and a server sharing its manual clock.
struct YearRunner {
    static let offerSigner = OfferSigner(
        keyID: "OFFERKEY01", issuerID: "57246542-96fe-1a63-e053-0824d011072a", bundleID: ExampleApp.bundleID,
        privateKey: P256.Signing.PrivateKey())
    static let offerKeys: [AppStoreServerAPITokenVerifier.Key] = [
        .init(keyID: offerSigner.keyID, issuerID: offerSigner.issuerID, publicKey: offerSigner.publicKey)
    ]
    static let day: Int64 = 86_400_000

    /// The first day of the year (days since 1970-01-01, UTC): the day after the fixture's start.
    static let firstDay = Int(ServerFixture.start.timeIntervalSince1970 / 86_400) + 1
    static var lastDay: Int { firstDay + YearPlan.days - 1 }

    var fixture: ServerFixture
    let plan: YearPlan
    let delivery: Delivery
    /// Opens the ledger again for a restart (the same file or schema).
    let reopen: @Sendable () async throws -> any LedgerStore
    var log = YearLog()
    var random = SeededGenerator(seed: 7)

    var engine: SandboxEngine { fixture.engine }
    var service: PurchaseService { fixture.service }

    mutating func count(_ what: String) { log.counts[what, default: 0] += 1 }

    /// Plays the whole year, then brings the metrics up to date.
    mutating func run() async throws {
        // Each day starts at 01:00 UTC; the customers act during the following hour.
        let firstMorning = TimeInterval(Self.firstDay) * 86_400 + 3_600
        try await engine.advanceClock(by: firstMorning - fixture.clock.now().timeIntervalSince1970)
        for customer in plan.customers {
            _ = try await engine.createTester(name: customer.id, storefront: customer.storefront, id: customer.id)
            _ = try await engine.createTester(
                name: customer.familyMember, storefront: customer.memberStorefront, id: customer.familyMember)
        }
        var byDay: [Int: [(CustomerPlan, CustomerAction)]] = [:]
        for customer in plan.customers {
            for (day, action) in customer.actions { byDay[day, default: []].append((customer, action)) }
        }
        for day in 0..<YearPlan.days {
            if day == delivery.restartDay {
                try await fixture.store.shutdown()
                fixture = try await fixture.restarted(on: try await reopen())
                count("server restarts")
            }
            // Grace periods of 16 days on two days out of three; billing retry without grace otherwise.
            _ = try await engine.updateSettings(SandboxSettingsUpdate(gracePeriodDays: day % 3 == 0 ? 0 : 16))
            for (customer, action) in byDay[day] ?? [] {
                try await engine.advanceClock(by: TimeInterval(random.int(1...40) * 60))
                try await perform(action, for: customer)
            }
            try await deliverNotifications(day: day)
            let nextMorning = TimeInterval(Self.firstDay + day + 1) * 86_400 + 3_600
            try await engine.advanceClock(by: nextMorning - fixture.clock.now().timeIntervalSince1970)
            try await deliverNotifications(day: day)
            if day % delivery.updateEvery == delivery.updateEvery - 1 { try await service.updateMetrics() }
        }
        try await service.updateMetrics()
        for tester in await engine.testers() { log.transactions += await engine.transactions(of: tester.id) }
    }

    /// Queues what the App Store notifies and delivers it to the server, as Apple POSTs it.
    mutating func deliverNotifications(day: Int) async throws {
        for event in await engine.events() {
            guard let info = event.renewalInfo, let grace = info.gracePeriodExpiresDate, let renewal = info.renewalDate,
                let original = info.originalTransactionID
            else { continue }
            log.graces.insert(
                ReportedGrace(
                    originalTransactionID: original, periodExpiry: renewal.epochMilliseconds,
                    graceExpiry: grace.epochMilliseconds))
        }
        var records = try await engine.queueNotifications()
        log.notifications += records.count
        if delivery.duplicated {
            if day % 4 == 1 { records.reverse() }
            records += records.reversed()
        }
        for record in records {
            _ = try await service.receiveNotification(ResponseBodyV2(signedPayload: record.signedPayload))
        }
    }

    /// Uploads a transaction from the customer's device.
    mutating func upload(_ transaction: SandboxTransaction, as customer: String) async throws {
        let jws = try engine.signer.signTransaction(transaction, at: fixture.clock.now())
        try await service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: customer)
        log.uploads += 1
    }

    func subscription(of customer: String) async -> SandboxTransaction? {
        await engine.transactions(of: customer).last { $0.productType == .autoRenewableSubscription }
    }

    func status(of customer: String) async -> SubscriptionStatus? {
        guard let latest = await subscription(of: customer) else { return nil }
        return try? await engine.status(originalTransactionID: latest.originalID)
    }

    /// Buys and uploads; `nil` when the App Store did not sell.
    @discardableResult
    mutating func buy(_ request: PurchaseRequest, as customer: String) async throws -> SandboxTransaction? {
        let before = await subscription(of: customer)
        guard case .purchased(let transaction) = try await engine.purchase(request, offerKeys: Self.offerKeys) else {
            return nil
        }
        // A downgrade returns the current transaction: nothing new to upload.
        if transaction.id != before?.id || transaction.productType != .autoRenewableSubscription {
            try await upload(transaction, as: customer)
        }
        return transaction
    }

    mutating func perform(_ action: CustomerAction, for customer: CustomerPlan) async throws {
        let id = customer.id
        switch action {
        case .subscribe(let product):
            guard let bought = try await buy(PurchaseRequest(testerID: id, productID: product), as: id) else { return }
            count(bought.offerDiscountType == .freeTrial ? "free trials started" : "subscriptions bought without a trial")
        case .cancel:
            guard let latest = await subscription(of: id), await status(of: id) != .expired else { return }
            try await engine.setAutoRenew(false, originalTransactionID: latest.originalID)
            count(latest.offerDiscountType == .freeTrial ? "trials cancelled" : "subscriptions cancelled")
        case .resubscribe(let product):
            guard await status(of: id) == .expired else { return }
            if try await buy(PurchaseRequest(testerID: id, productID: product), as: id) != nil { count("plain resubscriptions") }
        case .winBack:
            guard await status(of: id) == .expired else { return }
            if try await buy(PurchaseRequest(testerID: id, productID: YearCatalog.monthly, winBackOfferID: YearCatalog.winBack), as: id) != nil {
                count("win-back offers redeemed")
            }
        case .promotional(let offer):
            guard await status(of: id) == .expired else { return }
            let signature = PromotionalOfferSignature(
                compactJWS: try Self.offerSigner.promotionalOffer(
                    productID: YearCatalog.monthly, offerID: offer, transactionID: nil, nonce: UUID(),
                    issuedAt: fixture.clock.now()))
            let request = PurchaseRequest(
                testerID: id, productID: YearCatalog.monthly, promotionalOfferID: offer,
                promotionalOfferSignature: signature)
            if try await buy(request, as: id) != nil { count("promotional offers redeemed (\(offer.split(separator: ".").last!))") }
        case .change(let product):
            guard let latest = await subscription(of: id), await status(of: id) == .active, latest.productID != product
            else { return }
            guard try await buy(PurchaseRequest(testerID: id, productID: product), as: id) != nil else { return }
            count(YearCatalog.level[product]! < YearCatalog.level[latest.productID]! ? "upgrades" : "downgrades")
        case .failBilling:
            guard let latest = await subscription(of: id) else { return }
            try await engine.failRenewals(originalTransactionID: latest.originalID)
            count("billing failures set up")
        case .resolveBilling:
            let state = await status(of: id)
            guard let latest = await subscription(of: id), state == .billingGracePeriod || state == .billingRetry
            else { return }
            try await engine.resolveBillingIssue(originalTransactionID: latest.originalID)
            if state == .billingGracePeriod { count("recoveries in grace period") }
            if state == .billingRetry { count("recoveries in billing retry") }
        case .refundCurrent(let percentage, let forIssue):
            guard let latest = await subscription(of: id), latest.revocationDate == nil, latest.priceMilliunits > 0 else { return }
            try await engine.refund(latest.id, reason: forIssue ? .appIssue : .other, percentage: percentage)
            count(percentage == nil ? "full refunds" : "partial refunds")
        case .refundEarlier(let percentage, let forIssue):
            let earlier = await engine.transactions(of: id).filter {
                $0.productType == .autoRenewableSubscription && $0.revocationDate == nil && $0.priceMilliunits > 0
            }.dropLast()
            guard let transaction = earlier.last else { return }
            try await engine.refund(transaction.id, reason: forIssue ? .appIssue : .other, percentage: percentage)
            count(percentage == nil ? "full refunds" : "partial refunds")
        case .refundRest:
            guard let refunded = await engine.transactions(of: id).last(where: {
                ($0.revocationPercentage ?? SandboxEngine.fullRefundPercentage) < SandboxEngine.fullRefundPercentage
            }) else { return }
            try await engine.refund(refunded.id, reason: .appIssue)
            count("partial refunds completed later")
        case .share:
            guard let latest = await subscription(of: id), await status(of: id) == .active else { return }
            guard let shared = try? await engine.shareWithFamily(latest.id, member: customer.familyMember) else { return }
            try await upload(shared, as: customer.familyMember)
            count("family shares")
        case .unshare:
            guard let shared = await subscription(of: customer.familyMember), shared.revocationDate == nil,
                await status(of: customer.familyMember) != .expired
            else { return }
            try await engine.revoke(shared.id)
            count("family members who left")
        case .consumable(let product, let quantity):
            if try await buy(PurchaseRequest(testerID: id, productID: product, quantity: quantity), as: id) != nil {
                count(product == YearCatalog.removeAd ? "non-consumables bought" : "consumables bought")
            }
        case .refundConsumable(let percentage):
            guard let bought = await engine.transactions(of: id).last(where: { $0.productType == .consumable && $0.revocationDate == nil })
            else { return }
            try await engine.refund(bought.id, reason: .appIssue, percentage: percentage)
            count(percentage == nil ? "full refunds" : "partial refunds")
        }
    }
}
