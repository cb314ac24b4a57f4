#if os(Linux)
import Foundation
import Kakin
import KakinStoreKit
import StoreKit
import Testing

/// The App Store's manage-subscriptions and refund request sheets through the StoreKit backend:
/// shown in the app's window scene, with what the customer did, and StoreKit's errors mapped.
@Suite struct AppStoreSheetsTests {
    @MainActor static let scene = UIWindowScene()

    static func backend() -> StoreKitBackend { StoreKitBackend(confirmIn: { Self.scene }) }

    @Test func manageSubscriptionsShowsInTheAppsSceneForAllGroupsOrOne() async throws {
        let after = try await StoreKitTestScript.withScript(.init()) {
            try await Self.backend().showManageSubscriptions(subscriptionGroupID: nil)
            try await Self.backend().showManageSubscriptions(subscriptionGroupID: "21000001")
        }
        let scene = await MainActor.run { ObjectIdentifier(Self.scene) }
        #expect(after.manageSubscriptionsSheets.map(\.scene) == [scene, scene])
        #expect(after.manageSubscriptionsSheets.map(\.subscriptionGroupID) == [nil, "21000001"])
    }

    @Test func aRefundRequestReturnsWhatTheCustomerDid() async throws {
        var script = StoreKitTestScript.State()
        script.refundResults[8] = .userCancelled
        var outcomes: [RefundRequestOutcome] = []
        let after = try await StoreKitTestScript.withScript(script) {
            outcomes.append(try await Self.backend().beginRefundRequest(for: "7"))
            outcomes.append(try await Self.backend().beginRefundRequest(for: "8"))
            StoreKitTestScript.update { $0.refundError = Transaction.RefundRequestError.duplicateRequest }
            outcomes.append(try await Self.backend().beginRefundRequest(for: "7"))
            StoreKitTestScript.update { $0.refundError = StoreKitError.userCancelled }
            outcomes.append(try await Self.backend().beginRefundRequest(for: "9"))
        }
        #expect(outcomes == [.requested, .cancelled, .alreadyRequested, .cancelled])
        #expect(after.refundRequests.map(\.transactionID) == [7, 8, 7, 9])
    }

    @Test func sheetFailuresAreTypedErrors() async throws {
        var script = StoreKitTestScript.State()
        script.refundError = Transaction.RefundRequestError.failed
        script.manageSubscriptionsError = StoreKitError.networkError(URLError(.timedOut))
        var refund: KakinError?
        var manage: KakinError?
        var badID: KakinError?
        var noScene: KakinError?
        let after = try await StoreKitTestScript.withScript(script) {
            do { _ = try await Self.backend().beginRefundRequest(for: "7") } catch { refund = error as? KakinError }
            do { try await Self.backend().showManageSubscriptions(subscriptionGroupID: nil) } catch {
                manage = error as? KakinError
            }
            do { _ = try await Self.backend().beginRefundRequest(for: "not-a-number") } catch {
                badID = error as? KakinError
            }
            do { try await StoreKitBackend().showManageSubscriptions(subscriptionGroupID: nil) } catch {
                noScene = error as? KakinError
            }
        }
        #expect(refund?.code == .storeFailure && refund?.isRetryable == true)
        #expect(refund.map(PaymentError.init) == .storeFailure("the refund request failed"))
        #expect(manage?.code == .network && manage.map(PaymentError.init)?.isRetryable == true)
        #expect(badID?.code == .storeFailure && badID.map(PaymentError.init) == .invalidPayment)
        #expect(noScene?.code == .notConfigured, "a sheet needs the app's window scene")
        #expect(after.refundRequests.map(\.transactionID) == [7], "neither bad request reached StoreKit")
        #expect(after.manageSubscriptionsSheets.count == 1)
    }

    @Test func aWindowSceneTheAppNoLongerHasIsNotConfigured() async throws {
        var failure: KakinError?
        let after = try await StoreKitTestScript.withScript(.init()) {
            do { _ = try await StoreKitBackend(confirmIn: { nil }).beginRefundRequest(for: "7") } catch {
                failure = error as? KakinError
            }
        }
        #expect(failure?.code == .notConfigured)
        #expect(after.refundRequests.isEmpty)
    }
}
#endif
