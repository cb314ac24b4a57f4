import AppStoreModels
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

/// Auto-renewable subscriptions shared with a family member: the member's own subscription follows
/// the purchaser's through renewals, expiry, refunds and leaving the family.
@Suite struct FamilySubscriptionSharingTests {
    static let products: [String: SandboxProductInfo] = {
        var monthly = SandboxProductInfo(
            id: "family.monthly", type: .autoRenewableSubscription, priceMilliunits: 9_990, currency: "USD",
            subscriptionGroupID: "family", groupLevel: 2, period: .oneMonth)
        monthly.isFamilyShareable = true
        var yearly = SandboxProductInfo(
            id: "family.yearly", type: .autoRenewableSubscription, priceMilliunits: 99_990, currency: "USD",
            subscriptionGroupID: "family", groupLevel: 1, period: .oneYear)
        yearly.isFamilyShareable = true
        let solo = SandboxProductInfo(
            id: "solo.monthly", type: .autoRenewableSubscription, priceMilliunits: 4_990, currency: "USD",
            subscriptionGroupID: "solo", groupLevel: 1, period: .oneMonth)
        return [monthly.id: monthly, yearly.id: yearly, solo.id: solo]
    }()

    /// A parent who subscribes and a child the subscription is shared with, on a manual clock.
    struct Family {
        let clock = SandboxClock.manual(at: EngineFixture.start)
        let store: any SandboxStateStore
        let engine: SandboxEngine

        init(store: any SandboxStateStore = MemoryStateStore()) throws {
            self.store = store
            engine = try Self.engine(store: store, clock: clock)
        }

        /// An engine on `store` and `clock`: the same sandbox after a restart.
        static func engine(store: any SandboxStateStore, clock: SandboxClock) throws -> SandboxEngine {
            try ExampleSandbox.engine(
                products: FamilySubscriptionSharingTests.products, storefrontIDs: ["USA": "143441", "JPN": "143462"],
                authority: EngineFixture.authority, clock: clock, store: store)
        }

        func subscribe(
            _ tester: SandboxTester, to productID: String = "family.monthly"
        ) async throws
            -> SandboxTransaction
        {
            try #require(try await engine.purchase(.init(testerID: tester.id, productID: productID)).transaction)
        }
    }

    static let day: TimeInterval = 86_400

    @Test func aSharedMonthlySubscriptionRenewsForTheMemberUnderItsOwnOriginalID() async throws {
        let family = try Family()
        let parent = try await family.engine.createTester(name: "parent@example.com")
        let child = try await family.engine.createTester(name: "child@example.com", storefront: "JPN")
        let first = try await family.subscribe(parent)
        #expect(first.priceMilliunits == 9_990)
        try await family.engine.advanceClock(by: 10 * Self.day)

        let shared = try await family.engine.shareWithFamily(first.id, member: child.id)
        #expect(shared.testerID == child.id)
        #expect(shared.id != first.id && shared.originalID == shared.id)
        #expect(shared.ownership == .familyShared)
        #expect(
            shared.payload(bundleID: ExampleApp.bundleID, signedDate: family.clock.now()).inAppOwnershipType
                == .familyShared)
        #expect(shared.productID == "family.monthly" && shared.productType == .autoRenewableSubscription)
        #expect(shared.purchaseDate == EngineFixture.start.addingTimeInterval(10 * Self.day))
        #expect(shared.originalPurchaseDate == shared.purchaseDate)
        #expect(shared.expiresDate == first.expiresDate)
        #expect(shared.priceMilliunits == 0)
        #expect(shared.storefront == "JPN" && shared.storefrontID == "143462")
        #expect(shared.webOrderLineItemID != nil && shared.webOrderLineItemID != first.webOrderLineItemID)
        #expect(shared.appAccountToken == nil && shared.orderID == nil)
        let joined = try #require(await family.engine.events().last)
        #expect(joined.notificationType == .subscribed && joined.subtype == .initialBuy)
        #expect(joined.transactionID == shared.id && joined.testerID == child.id)
        #expect(joined.renewalInfo?.originalTransactionID == shared.id)
        #expect(joined.status == .active)
        #expect(try await family.engine.status(originalTransactionID: shared.id) == .active)
        #expect(await family.engine.currentEntitlements(of: child.id).map(\.id) == [shared.id])

        // The parent's first renewal: one for the child too, in the child's own subscription.
        let firstRenewal = try await family.engine.advanceClock(by: 25 * Self.day)
        #expect(firstRenewal.map(\.notificationType) == [.didRenew, .didRenew])
        #expect(firstRenewal.map(\.testerID) == [parent.id, child.id])
        let parentRenewal = try #require(await family.engine.transactions(of: parent.id).last)
        #expect(parentRenewal.originalID == first.id && parentRenewal.priceMilliunits == 9_990)
        let childRenewal = try #require(await family.engine.transactions(of: child.id).last)
        #expect(firstRenewal.last?.transactionID == childRenewal.id)
        #expect(childRenewal.id != shared.id && childRenewal.originalID == shared.id)
        #expect(childRenewal.ownership == .familyShared && childRenewal.reason == .renewal)
        #expect(childRenewal.priceMilliunits == 0)
        #expect(childRenewal.purchaseDate == first.expiresDate)
        #expect(childRenewal.expiresDate == parentRenewal.expiresDate)
        #expect(childRenewal.originalPurchaseDate == shared.purchaseDate)

        // The second renewal: again one each.
        let secondRenewal = try await family.engine.advanceClock(by: 31 * Self.day)
        #expect(secondRenewal.map(\.notificationType) == [.didRenew, .didRenew])
        let childTransactions = await family.engine.transactions(of: child.id)
        #expect(childTransactions.count == 3)
        #expect(Set(childTransactions.map(\.id)).count == 3)
        #expect(childTransactions.allSatisfy { $0.originalID == shared.id && $0.ownership == .familyShared })
        let parentLatest = try #require(await family.engine.transactions(of: parent.id).last)
        #expect(childTransactions.last?.expiresDate == parentLatest.expiresDate)
        let childEvents = await family.engine.events().filter { $0.testerID == child.id }
        #expect(childEvents.map(\.notificationType) == [.subscribed, .didRenew, .didRenew])
        #expect(childEvents.map(\.transactionID) == childTransactions.map(\.id))
        #expect(try await family.engine.status(originalTransactionID: shared.id) == .active)
        #expect(await family.engine.currentEntitlements(of: child.id).map(\.id) == [childTransactions[2].id])
        // The parent's subscription is shared with the child, and the child's follows it.
        let state = await family.engine.snapshot
        #expect(state.subscriptions[first.id]?.familyMembers == [child.id: shared.id])
        #expect(state.subscriptions[shared.id]?.sharedFromOriginalTransactionID == first.id)
    }

    @Test func refundingThePurchaserRevokesTheMembersShare() async throws {
        let family = try Family()
        let parent = try await family.engine.createTester(name: "parent@example.com")
        let child = try await family.engine.createTester(name: "child@example.com")
        let first = try await family.subscribe(parent)
        let shared = try await family.engine.shareWithFamily(first.id, member: child.id)
        try await family.engine.advanceClock(by: 31 * Self.day)
        let parentRenewal = try #require(await family.engine.transactions(of: parent.id).last)
        let childRenewal = try #require(await family.engine.transactions(of: child.id).last)
        #expect(childRenewal.originalID == shared.id && childRenewal.id != shared.id)

        let before = await family.engine.events().count
        try await family.engine.refund(parentRenewal.id)
        let events = await family.engine.events().dropFirst(before)
        #expect(events.map(\.notificationType) == [.refund, .revoke])
        #expect(events.map(\.transactionID) == [parentRenewal.id, childRenewal.id])
        let revoked = try await family.engine.transaction(childRenewal.id)
        #expect(revoked.revocationType == .familyRevoke)
        #expect(revoked.revocationReason == .other)
        #expect(revoked.revocationPercentage == nil)
        #expect(revoked.revocationDate == family.clock.now())
        #expect(try await family.engine.status(originalTransactionID: shared.id) == .revoked)
        #expect(await family.engine.currentEntitlements(of: child.id).isEmpty)
        #expect(await family.engine.snapshot.subscriptions[first.id]?.familyMembers == nil)
        // Nothing renews any more, for either of them.
        #expect(try await family.engine.advanceClock(by: 62 * Self.day).isEmpty)
        #expect(await family.engine.transactions(of: child.id).count == 2)
    }

    @Test func aMemberLeavingTheFamilyStopsLaterRenewalsBeingShared() async throws {
        let family = try Family()
        let parent = try await family.engine.createTester(name: "parent@example.com")
        let child = try await family.engine.createTester(name: "child@example.com")
        let teen = try await family.engine.createTester(name: "teen@example.com")
        let first = try await family.subscribe(parent)
        let childShare = try await family.engine.shareWithFamily(first.id, member: child.id)
        let teenShare = try await family.engine.shareWithFamily(first.id, member: teen.id)
        #expect(childShare.originalID != teenShare.originalID)

        let left = try await family.engine.revoke(childShare.id)
        #expect(left.revocationType == .familyRevoke)
        #expect(await family.engine.events().last?.notificationType == .revoke)
        #expect(await family.engine.events().last?.transactionID == childShare.id)
        #expect(await family.engine.snapshot.subscriptions[first.id]?.familyMembers == [teen.id: teenShare.id])

        let renewals = try await family.engine.advanceClock(by: 31 * Self.day)
        #expect(renewals.map(\.notificationType) == [.didRenew, .didRenew])
        #expect(renewals.map(\.testerID) == [parent.id, teen.id])
        #expect(await family.engine.transactions(of: child.id).map(\.id) == [childShare.id])
        #expect(await family.engine.transactions(of: teen.id).count == 2)
        #expect(try await family.engine.status(originalTransactionID: childShare.id) == .revoked)

        // Back in the family: the same shared subscription again, RESUBSCRIBE.
        let back = try await family.engine.shareWithFamily(first.id, member: child.id)
        #expect(back.originalID == childShare.id && back.id != childShare.id)
        let parentLatest = try #require(await family.engine.transactions(of: parent.id).last)
        #expect(back.expiresDate == parentLatest.expiresDate)
        #expect(await family.engine.events().last?.subtype == .resubscribe)
        #expect(try await family.engine.status(originalTransactionID: childShare.id) == .active)
    }

    @Test func thePurchasersExpiryExpiresTheMembersSubscription() async throws {
        let family = try Family()
        let parent = try await family.engine.createTester(name: "parent@example.com")
        let child = try await family.engine.createTester(name: "child@example.com")
        let first = try await family.subscribe(parent)
        let shared = try await family.engine.shareWithFamily(first.id, member: child.id)
        try await family.engine.setAutoRenew(false, originalTransactionID: first.id)
        let turnedOff = await family.engine.events().suffix(2)
        #expect(turnedOff.map(\.notificationType) == [.didChangeRenewalStatus, .didChangeRenewalStatus])
        #expect(turnedOff.map(\.subtype) == [.autoRenewDisabled, .autoRenewDisabled])
        #expect(turnedOff.map(\.transactionID) == [first.id, shared.id])
        #expect(try await family.engine.renewalInfo(originalTransactionID: shared.id).autoRenewStatus == .off)
        await #expect(throws: SandboxError.self, "the member's subscription follows the purchaser's") {
            try await family.engine.setAutoRenew(true, originalTransactionID: shared.id)
        }

        let expired = try await family.engine.advanceClock(by: 31 * Self.day)
        #expect(expired.map(\.notificationType) == [.expired, .expired])
        #expect(expired.map(\.subtype) == [.voluntary, .voluntary])
        #expect(expired.map(\.transactionID) == [first.id, shared.id])
        #expect(try await family.engine.status(originalTransactionID: shared.id) == .expired)
        #expect(
            try await family.engine.renewalInfo(originalTransactionID: shared.id).expirationIntent
                == .customerCancelled)
        #expect(await family.engine.currentEntitlements(of: child.id).isEmpty)
        await #expect(throws: SandboxError.self, "an expired subscription is not shared") {
            try await family.engine.shareWithFamily(first.id, member: child.id)
        }
    }

    @Test func anUpgradeMovesTheMemberToThePurchasersNewProduct() async throws {
        let family = try Family()
        let parent = try await family.engine.createTester(name: "parent@example.com")
        let child = try await family.engine.createTester(name: "child@example.com")
        let first = try await family.subscribe(parent)
        let shared = try await family.engine.shareWithFamily(first.id, member: child.id)
        try await family.engine.advanceClock(by: 5 * Self.day)
        let upgrade = try await family.subscribe(parent, to: "family.yearly")
        #expect(upgrade.originalID == first.id)
        let events = await family.engine.events().suffix(2)
        #expect(events.map(\.notificationType) == [.didChangeRenewalPref, .didChangeRenewalPref])
        #expect(events.map(\.subtype) == [.upgrade, .upgrade])
        let childUpgrade = try #require(await family.engine.transactions(of: child.id).last)
        #expect(childUpgrade.originalID == shared.id && childUpgrade.productID == "family.yearly")
        #expect(childUpgrade.expiresDate == upgrade.expiresDate && childUpgrade.priceMilliunits == 0)
        #expect(try await family.engine.transaction(shared.id).isUpgraded)
        #expect(await family.engine.currentEntitlements(of: child.id).map(\.productID) == ["family.yearly"])
    }

    @Test func onlyWhatCanBeSharedIsShared() async throws {
        let family = try Family()
        let parent = try await family.engine.createTester(name: "parent@example.com")
        let child = try await family.engine.createTester(name: "child@example.com")
        let teen = try await family.engine.createTester(name: "teen@example.com")
        let first = try await family.subscribe(parent)
        let solo = try await family.subscribe(parent, to: "solo.monthly")
        let shared = try await family.engine.shareWithFamily(first.id, member: child.id)
        await #expect(throws: SandboxError.self, "shared with the child already") {
            try await family.engine.shareWithFamily(first.id, member: child.id)
        }
        await #expect(throws: SandboxError.self, "a member cannot share on what was shared with them") {
            try await family.engine.shareWithFamily(shared.id, member: teen.id)
        }
        await #expect(throws: SandboxError.self, "the product has no Family Sharing") {
            try await family.engine.shareWithFamily(solo.id, member: child.id)
        }
        await #expect(throws: SandboxError.self, "not with the buyer themselves") {
            try await family.engine.shareWithFamily(first.id, member: parent.id)
        }
        // The child buying in the group starts a subscription of their own, paid for.
        let own = try await family.subscribe(child)
        #expect(own.originalID == own.id && own.originalID != shared.id)
        #expect(own.ownership != .familyShared && own.priceMilliunits == 9_990)
        #expect(await family.engine.events().last?.subtype == .initialBuy)
    }

    @Test(arguments: ["state.db", "state.json"]) func theShareSurvivesARestart(file: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakin-family-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        func store() throws -> any SandboxStateStore {
            file == "state.db" ? try SQLiteStateStore(directory: directory) : FileStateStore(directory: directory)
        }
        let family = try Family(store: try store())
        let parent = try await family.engine.createTester(name: "parent@example.com")
        let child = try await family.engine.createTester(name: "child@example.com")
        let first = try await family.subscribe(parent)
        let shared = try await family.engine.shareWithFamily(first.id, member: child.id)

        let restarted = try Family.engine(store: try store(), clock: family.clock)
        let state = await restarted.snapshot
        #expect(state.subscriptions[first.id]?.familyMembers == [child.id: shared.id])
        #expect(state.subscriptions[shared.id]?.sharedFromOriginalTransactionID == first.id)
        let renewals = try await restarted.advanceClock(by: 31 * Self.day)
        #expect(renewals.map(\.testerID) == [parent.id, child.id])
        let childRenewal = try #require(await restarted.transactions(of: child.id).last)
        #expect(childRenewal.originalID == shared.id && childRenewal.id != shared.id)
        #expect(childRenewal.ownership == .familyShared)
    }

    @Test func stateSavedBeforeSharingReadsAsSharedWithNobody() throws {
        var subscription = SubscriptionState(
            originalTransactionID: "2000000000000001", testerID: "parent", subscriptionGroupID: "family",
            productID: "family.monthly", startDate: EngineFixture.start)
        subscription.familyMembers = ["child": "2000000000000002"]
        subscription.sharedFromOriginalTransactionID = "2000000000000003"
        var object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(subscription)) as? [String: Any])
        #expect(object["familyMembers"] != nil)
        object["familyMembers"] = nil
        object["sharedFromOriginalTransactionID"] = nil
        let older = try JSONDecoder().decode(
            SubscriptionState.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(older.familyMembers == nil && older.sharedFromOriginalTransactionID == nil)
        #expect(older.originalTransactionID == "2000000000000001" && older.productID == "family.monthly")
    }
}
