import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The subscription metrics: what a purchase contributes, worked out from its transactions. (The
/// job that keeps the rollups, and the reads, are the contract of ``MetricsLedger``:
/// ``MetricsLedgerContractTests``.)
@Suite("Ledger: subscription metrics")
struct SubscriptionMetricsTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_700_006_400_000  // 2023-11-15 00:00 UTC
    static let firstDay = Int(start / day)

    /// A compact JWS whose payload carries `fields` (the metrics read it without verifying).
    static func jws(_ fields: [String: String]) -> String {
        let payload = try! JSONSerialization.data(withJSONObject: fields, options: .sortedKeys)
        func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return "\(base64URL(Data("{}".utf8))).\(base64URL(payload)).c2ln"
    }

    static func subscription(
        _ id: String, original: String, user: String?, product: String = "monthly", from: Int64, days: Int64,
        price: Int64 = 9_990, currency: String = "USD", storefront: String = "USA", trial: Bool = false,
        family: Bool = false, revokedAt: Int64? = nil, share: Int? = nil
    ) -> RecordedTransaction {
        var fields = ["storefront": storefront]
        if trial { fields["offerDiscountType"] = "FREE_TRIAL" }
        if family { fields["inAppOwnershipType"] = "FAMILY_SHARED" }
        return RecordedTransaction(
            transactionID: id, originalTransactionID: original, bundleID: Fixture.bundleID, appUserID: user,
            productID: product, productType: .autoRenewableSubscription, purchaseDate: LedgerTime.date(from),
            expiresDate: LedgerTime.date(from + days * day), revocationDate: revokedAt.map(LedgerTime.date),
            revocationReason: revokedAt == nil ? nil : .appIssue, revocationType: share == nil ? nil : .refundProrated,
            revocationPercentage: share, environment: .sandbox, signedTransaction: jws(fields), source: .app,
            recordedAt: LedgerTime.date(from), price: trial || family ? 0 : price, currency: currency)
    }

    static func metric(_ transaction: RecordedTransaction) -> MetricTransaction {
        var row = TransactionRow(transaction, owner: transaction.appUserID, signedDigest: nil)
        row.revocationPercentage = transaction.revocationPercentage.map(Int64.init)
        return MetricTransaction(row)
    }

    /// Sums of each column over every key, per day from `firstDay`.
    static func totals(_ contributions: MetricContributions) -> [Int: MetricCounts] {
        var byDay: [Int: MetricCounts] = [:]
        for (key, counts) in contributions.days { byDay[key.day - firstDay] = (byDay[key.day - firstDay] ?? MetricCounts()) + counts }
        return byDay.filter { !$0.value.isZero }
    }

    @Test("a signed transaction's payload is read from its base64url segment, at every padding; other shapes are not")
    func payloadBytes() throws {
        // Payloads of 1, 2 and 3 bytes past a multiple of three, with bytes that base64url writes as - and _.
        for payload in [Data([0xfb]), Data([0xfb, 0xff]), Data([0xfb, 0xff, 0xbf]), Data([0xfb, 0xff, 0xbf, 0x3e])] {
            let segment = payload.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(JWSPayloadBytes.decode("e30.\(segment).c2ln") == payload)
        }
        let fields = try #require(SignedMetricFields(jws: Self.jws(["storefront": "JPN", "inAppOwnershipType": "FAMILY_SHARED"])))
        #expect(fields.storefront == "JPN" && fields.inAppOwnershipType == "FAMILY_SHARED" && fields.offerDiscountType == nil)
        for malformed in ["", "e30", "e30.e30", "e30.e30.c2ln.c2ln", "e30.e30*.c2ln", "e30.a.c2ln"] {
            #expect(JWSPayloadBytes.decode(malformed) == nil, "\(malformed)")
        }
    }

    @Test("a trial that converts, renewals and an upgrade: one covering period at a time, MRR by the period's length")
    func coveringPeriods() throws {
        let transactions = [
            Self.subscription("t0", original: "t0", user: "alice", from: Self.start, days: 7, trial: true),
            Self.subscription("t1", original: "t0", user: "alice", from: Self.start + 7 * Self.day, days: 30),
            Self.subscription("t2", original: "t0", user: "alice", from: Self.start + 37 * Self.day, days: 30),
            // An upgrade to a yearly plan ten days into the third period: it covers from then on.
            Self.subscription(
                "t3", original: "t0", user: "alice", product: "yearly", from: Self.start + 47 * Self.day, days: 365,
                price: 99_990),
        ].map(Self.metric)
        let unit = MetricUnit(
            bundleID: Fixture.bundleID, originalTransactionID: "t0", transactions: transactions, graceExpiries: [])
        let days = Self.totals(unit.contributions)
        #expect(days[0]?[.trialStarts] == 1)
        #expect(days[0]?[.trialsStarted] == 1)
        #expect(days[0]?[.trialsConverted] == 1)
        #expect(days[7]?[.trialEnds] == 1)
        #expect(days[7]?[.paidStarts] == 1)
        #expect(days[7]?[.mrrStarts] == 9_990)
        // The renewal on day 37 ends one period and starts the next: same product, nets out.
        #expect(days[37]?[.paidStarts] == 1 && days[37]?[.paidEnds] == 1)
        // The upgrade moves the subscription to the yearly product at its yearly price / 12.
        #expect(days[47]?[.paidEnds] == 1 && days[47]?[.mrrEnds] == 9_990)
        #expect(days[47]?[.paidStarts] == 1 && days[47]?[.mrrStarts] == 8_333)
        #expect(days[47 + 365]?[.paidEnds] == 1)
        #expect(days[0]?[.purchases] == 1 && days[0]?[.revenue] == 0)
        #expect(days[47]?[.revenue] == 99_990)
        #expect(unit.runs == [
            MetricRun(
                kind: .paid, start: Self.start + 7 * Self.day, end: Self.start + 412 * Self.day, productID: "yearly",
                storefront: "USA"),
            MetricRun(
                kind: .trial, start: Self.start, end: Self.start + 7 * Self.day, productID: "monthly", storefront: "USA",
                converted: true),
        ])
        #expect(unit.firstPayment?.instant == Self.start + 7 * Self.day)
        // Retention: active and paid on the same day of each following month until day 412
        // (months 0 to 13).
        let retained = unit.contributions.cohorts.filter { $0.key.kind == MetricCohortKind.retained.rawValue }
        #expect(retained.map(\.key.offset).sorted() == Array(0...13))
        #expect(unit.contributions.cohorts.contains { $0.key.kind == MetricCohortKind.retentionSize.rawValue && $0.value == 1 })
    }

    @Test("a grace period keeps the subscription active until the renewal that recovers it; billing retry without grace does not")
    func gracePeriods() throws {
        let first = Self.subscription("g1", original: "g1", user: "bob", from: Self.start, days: 30)
        // Apple retried for five days; the renewal recovered on day 35.
        let recovered = Self.subscription("g2", original: "g1", user: "bob", from: Self.start + 35 * Self.day, days: 30)
        let withGrace = MetricUnit(
            bundleID: Fixture.bundleID, originalTransactionID: "g1", transactions: [first, recovered].map(Self.metric),
            graceExpiries: [MetricGrace(expiresAt: Self.start + 46 * Self.day, periodExpiresAt: Self.start + 30 * Self.day)])
        #expect(withGrace.runs.map { [$0.start, $0.end] } == [[Self.start, Self.start + 65 * Self.day]])
        let withoutGrace = MetricUnit(
            bundleID: Fixture.bundleID, originalTransactionID: "g1", transactions: [first, recovered].map(Self.metric),
            graceExpiries: [])
        #expect(withoutGrace.runs.count == 2)
        // A grace period that ran out: active until it did.
        let lapsed = MetricUnit(
            bundleID: Fixture.bundleID, originalTransactionID: "g1", transactions: [Self.metric(first)],
            graceExpiries: [MetricGrace(expiresAt: Self.start + 46 * Self.day, periodExpiresAt: nil)])
        #expect(lapsed.runs.map { [$0.start, $0.end] } == [[Self.start, Self.start + 46 * Self.day]])
        let days = Self.totals(lapsed.contributions)
        #expect(days[46]?[.paidEnds] == 1 && days[46]?[.mrrEnds] == 9_990)
        // A grace period named for an earlier period does not stretch a later one: weekly periods,
        // the first failed (grace until day 23), recovered on day 9, then cancelled on day 16.
        let weekly = [
            Self.subscription("k1", original: "k1", user: "kim", product: "weekly", from: Self.start, days: 7, price: 2_990),
            Self.subscription(
                "k2", original: "k1", user: "kim", product: "weekly", from: Self.start + 9 * Self.day, days: 7, price: 2_990),
        ].map(Self.metric)
        let recoveredThenCancelled = MetricUnit(
            bundleID: Fixture.bundleID, originalTransactionID: "k1", transactions: weekly,
            graceExpiries: [MetricGrace(expiresAt: Self.start + 23 * Self.day, periodExpiresAt: Self.start + 7 * Self.day)])
        #expect(recoveredThenCancelled.runs.map { [$0.start, $0.end] } == [[Self.start, Self.start + 16 * Self.day]])
    }

    @Test("refunds at their share, by reason and type; weeks × 52 / 12; the second year of paid service")
    func refundsWeeksAndSecondYear() throws {
        let weekly = Self.subscription("w1", original: "w1", user: "carol", product: "weekly", from: Self.start, days: 7, price: 2_990)
        #expect(Self.metric(weekly).monthlyAmount == 12_957)
        let refunded = Self.subscription(
            "w2", original: "w1", user: "carol", product: "weekly", from: Self.start + 7 * Self.day, days: 7, price: 2_990,
            revokedAt: Self.start + 9 * Self.day, share: 50_000)
        let unit = MetricUnit(
            bundleID: Fixture.bundleID, originalTransactionID: "w1", transactions: [weekly, refunded].map(Self.metric),
            graceExpiries: [])
        let days = Self.totals(unit.contributions)
        #expect(days[9]?[.refunds] == 1)
        #expect(days[9]?[.refunded] == 1_495)
        #expect(days[9]?[.refundsForIssue] == 1)
        #expect(days[9]?[.refundsProrated] == 1)
        #expect(days[9]?[.paidEnds] == 1)
        #expect(unit.monthlyNet == [MetricUnit.MonthlyNet(month: MetricMath.month(Self.start), currency: "USD", amount: 4_485)])

        // Monthly renewals for 14 months without a break: the 13th and later are second-year.
        let months = (0..<14).map {
            Self.subscription("y\($0)", original: "y0", user: "dave", from: Self.start + Int64($0) * 30 * Self.day, days: 30)
        }
        #expect(MetricUnit.secondYearTransactions(months.map(Self.metric)) == ["y13"])
        // A gap of more than 60 days starts the count again.
        var broken = months
        for index in 7..<14 {
            broken[index].purchaseDate = broken[index].purchaseDate.addingTimeInterval(61 * 86_400)
            broken[index].expiresDate = broken[index].expiresDate!.addingTimeInterval(61 * 86_400)
        }
        #expect(MetricUnit.secondYearTransactions(broken.map(Self.metric)).isEmpty)
    }
}

/// A customer's figures kept step by step (from the changed purchases alone where they decide
/// them) add up to the figures worked out from all their purchases at once.
@Suite("Ledger: customer figures kept step by step")
struct CustomerMetricsStepTests {
    static let month: Int64 = 31 * 86_400_000
    static let january: Int64 = 1_704_067_200_000  // 2024-01-01 UTC

    static func record(paidAt instant: Int64?, net: [(Int64, Int64)]) -> MetricUnitRecord {
        MetricUnitRecord(
            contributions: MetricContributions(),
            firstPayment: instant.map { MetricFirstPayment(instant: $0, productID: "p", storefront: "USA", currency: "USD") },
            monthlyNet: net.map { MetricUnit.MonthlyNet(month: MetricMath.month($0.0), currency: "USD", amount: $0.1) })
    }

    /// The customer figures of every customer's purchases, worked out at once.
    static func fromScratch(_ owners: [String: [String: MetricUnitRecord]]) -> MetricContributions {
        var total = MetricContributions()
        for (customer, purchases) in owners {
            var update = MetricsUpdate()
            _ = update.update(
                customer: MetricsUpdate.CustomerKey(bundleID: "app", environment: "Sandbox", customer: customer),
                stored: nil, purchases: purchases)
            total.merge(update.change)
        }
        return total
    }

    @Test("a purchase paid earlier, a purchase moved to another customer, a refund: the same as from scratch")
    func stepsAddUp() throws {
        var owners: [String: [String: MetricUnitRecord]] = [:]
        var states: [String: MetricCustomerState] = [:]
        var applied = MetricContributions()
        var fullRecomputes = 0
        /// One step: each purchase moves to an owner (or away, with `nil`) with a new record.
        func step(_ moves: [(purchase: String, owner: String?, record: MetricUnitRecord?)]) {
            var update = MetricsUpdate()
            var changes: [String: [MetricsUpdate.PurchaseChange]] = [:]
            for move in moves {
                let before = owners.first { $0.value[move.purchase] != nil }
                if let before {
                    owners[before.key]![move.purchase] = nil
                    changes[before.key, default: []].append(
                        .init(purchase: move.purchase, old: before.value[move.purchase], new: before.key == move.owner ? move.record : nil))
                }
                if let owner = move.owner, let record = move.record {
                    owners[owner, default: [:]][move.purchase] = record
                    if before?.key != owner { changes[owner, default: []].append(.init(purchase: move.purchase, old: nil, new: record)) }
                }
            }
            update.setChanges(changes.mapKeys { MetricsUpdate.CustomerKey(bundleID: "app", environment: "Sandbox", customer: $0) })
            for (customer, _) in changes {
                let key = MetricsUpdate.CustomerKey(bundleID: "app", environment: "Sandbox", customer: customer)
                let state: MetricCustomerState?
                if let decided = update.update(customer: key, stored: states[customer]) {
                    state = decided
                } else {
                    fullRecomputes += 1
                    state = update.update(customer: key, stored: states[customer], purchases: owners[customer] ?? [:])
                }
                states[customer] = state
            }
            applied.merge(update.change)
            #expect(applied == Self.fromScratch(owners))
        }
        let j = Self.january
        step([("p1", "carol", Self.record(paidAt: j + Self.month, net: [(j + Self.month, 9_990)]))])
        step([("p2", "carol", Self.record(paidAt: j + 2 * Self.month, net: [(j + 2 * Self.month, 4_990)]))])
        #expect(fullRecomputes == 0)
        // Paid earlier than the purchase that made carol a paying customer: her cohort moves.
        step([("p0", "carol", Self.record(paidAt: j, net: [(j, 1_990)]))])
        #expect(fullRecomputes == 1)
        // A refund of p2 in a later month: from the changed purchase alone.
        step([("p2", "carol", Self.record(paidAt: j + 2 * Self.month, net: [(j + 2 * Self.month, 4_990), (j + 3 * Self.month, -4_990)]))])
        #expect(fullRecomputes == 1)
        // p0 moves to dave: carol is worked out again, dave becomes a paying customer.
        step([("p0", "dave", Self.record(paidAt: j, net: [(j, 1_990)]))])
        #expect(states["dave"]?.purchase == "p0" && states["carol"]?.purchase == "p1")
        // A free purchase changes nothing; p1 goes away.
        step([("f1", "erin", Self.record(paidAt: nil, net: [])), ("p1", nil, nil)])
        #expect(states["erin"] == nil && states["carol"]?.purchase == "p2")
    }
}

extension Dictionary {
    fileprivate func mapKeys<T: Hashable>(_ transform: (Key) -> T) -> [T: Value] {
        Dictionary<T, Value>(uniqueKeysWithValues: map { (transform($0.key), $0.value) })
    }
}
