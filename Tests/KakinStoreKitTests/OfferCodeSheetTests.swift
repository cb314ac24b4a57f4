#if os(Linux)
import Foundation
import Kakin
@testable import KakinStoreKit
import StoreKit
import Testing

/// The offer code redemption sheet through the StoreKit backend: since iOS 27 it returns the
/// redeemed transaction (presented from the view controller on top of the app's scene), before it
/// only closes; on a Mac it is shown on the app's window. And the Mac's other sheets.
@Suite struct OfferCodeSheetTests {
    /// A scene whose key window's root view controller presents another: the sheet goes on top.
    @MainActor static let scene: UIWindowScene = {
        let scene = UIWindowScene()
        let window = UIWindow()
        let root = UIViewController()
        root.presentedViewController = top
        window.rootViewController = root
        scene.keyWindow = window
        return scene
    }()
    @MainActor static let top = UIViewController()
    @MainActor static let window: NSWindow = {
        let window = NSWindow()
        window.contentViewController = content
        return window
    }()
    @MainActor static let content = NSViewController()

    static func redeemed() -> VerificationResult<Transaction> {
        .verified(
            StoreKitTestScript.transaction(
                id: 41, productID: "com.example.kakin.premium.monthly", productType: .autoRenewable,
                purchaseDate: Date(timeIntervalSince1970: 1_790_000_000)))
    }

    @Test func sinceIOS27TheSheetReturnsTheRedeemedTransaction() async throws {
        var script = StoreKitTestScript.State()
        script.offerCodeRedemption = Self.redeemed()
        script.jws[41] = "jws-of-41"
        var outcome: OfferCodeRedemption?
        let after = try await StoreKitTestScript.withScript(script) {
            outcome = try await StoreKitBackend(confirmIn: { Self.scene }).presentOfferCodeRedeemSheet()
        }
        guard case .redeemed(let transaction) = outcome else {
            Issue.record("expected the redeemed transaction, got \(String(describing: outcome))")
            return
        }
        #expect(transaction.id == "41" && transaction.jwsRepresentation == "jws-of-41")
        let top = await MainActor.run { ObjectIdentifier(Self.top) }
        #expect(after.offerCodeSheets.map(\.presenter) == [top], "presented from the view controller on top")
        #expect(after.offerCodeSheets.map(\.returnsTransaction) == [true])
    }

    @Test func beforeIOS27TheSheetOnlyCloses() async throws {
        var outcome: OfferCodeRedemption?
        let after = try await StoreKitTestScript.withScript(.init()) {
            outcome = try await StoreKitBackend.presentOfferCodeRedeemSheet(
                presenter: .windowScene({ Self.scene }), returningTransaction: false)
        }
        #expect(outcome == .closed)
        let scene = await MainActor.run { ObjectIdentifier(Self.scene) }
        #expect(after.offerCodeSheets.map(\.presenter) == [scene])
        #expect(after.offerCodeSheets.map(\.returnsTransaction) == [false])
    }

    @Test func aCustomerWhoClosesTheSheetCancelled() async throws {
        var outcomes: [OfferCodeRedemption] = []
        _ = try await StoreKitTestScript.withScript(.init()) {
            outcomes.append(try await StoreKitBackend(confirmIn: { Self.scene }).presentOfferCodeRedeemSheet())
            StoreKitTestScript.update { $0.offerCodeError = StoreKitError.userCancelled }
            outcomes.append(try await StoreKitBackend(presentingIn: { Self.window }).presentOfferCodeRedeemSheet())
        }
        #expect(outcomes == [.cancelled, .cancelled])
    }

    @Test func sheetsFailWithTypedErrors() async throws {
        var script = StoreKitTestScript.State()
        script.offerCodeError = StoreKitError.invalidPresentationContext
        var notVisible: PaymentError?
        var noScene: KakinError?
        var noWindow: KakinError?
        var noRoot: KakinError?
        let after = try await StoreKitTestScript.withScript(script) {
            do { _ = try await StoreKitBackend(presentingIn: { Self.window }).presentOfferCodeRedeemSheet() } catch {
                notVisible = PaymentError(error)
            }
            do { _ = try await StoreKitBackend().presentOfferCodeRedeemSheet() } catch { noScene = error as? KakinError }
            do { _ = try await StoreKitBackend(presentingIn: { nil }).presentOfferCodeRedeemSheet() } catch {
                noWindow = error as? KakinError
            }
            do {
                _ = try await StoreKitBackend(confirmIn: { @MainActor in UIWindowScene() }).presentOfferCodeRedeemSheet()
            } catch { noRoot = error as? KakinError }
        }
        #expect(notVisible?.isRetryable == false)
        #expect(notVisible == .unknown("StoreKit cannot present its sheet from here: give the backend a visible window or scene"))
        #expect(noScene?.code == .notConfigured && noWindow?.code == .notConfigured)
        #expect(noRoot?.code == .notConfigured, "a scene without a window has nothing to present from")
        #expect(after.offerCodeSheets.count == 1, "only the first reached StoreKit")
    }

    @Test func onAMacTheSheetsAreShownOnTheAppsWindow() async throws {
        var script = StoreKitTestScript.State()
        script.offerCodeRedemption = Self.redeemed()
        script.refundResults[8] = .userCancelled
        var redeemed: OfferCodeRedemption?
        var older: OfferCodeRedemption?
        var refunds: [RefundRequestOutcome] = []
        let after = try await StoreKitTestScript.withScript(script) {
            let backend = StoreKitBackend(presentingIn: { Self.window })
            redeemed = try await backend.presentOfferCodeRedeemSheet()
            older = try await StoreKitBackend.presentOfferCodeRedeemSheet(
                presenter: .window({ Self.window }), returningTransaction: false)
            refunds.append(try await backend.beginRefundRequest(for: "7"))
            refunds.append(try await backend.beginRefundRequest(for: "8"))
            try await backend.showManageSubscriptions(subscriptionGroupID: nil)
            try await backend.showManageSubscriptions(subscriptionGroupID: "21000001")
        }
        if case .redeemed(let transaction) = redeemed { #expect(transaction.id == "41") } else {
            Issue.record("expected the redeemed transaction, got \(String(describing: redeemed))")
        }
        #expect(older == .closed)
        #expect(refunds == [.requested, .cancelled])
        let (window, content) = await MainActor.run { (ObjectIdentifier(Self.window), ObjectIdentifier(Self.content)) }
        #expect(after.offerCodeSheets.map(\.presenter) == [window, content], "macOS 27 on the window, before in its content")
        #expect(after.refundRequests.map(\.scene) == [content, content], "the refund sheet in the content view controller")
        #expect(after.manageSubscriptionsSheets.map(\.scene) == [window, window])
        #expect(after.manageSubscriptionsSheets.map(\.subscriptionGroupID) == [nil, "21000001"])
    }

    @Test func aMacWindowWithoutContentHasNoRefundSheet() async throws {
        var failure: KakinError?
        let after = try await StoreKitTestScript.withScript(.init()) {
            do {
                _ = try await StoreKitBackend(presentingIn: { @MainActor in NSWindow() }).beginRefundRequest(for: "7")
            } catch { failure = error as? KakinError }
        }
        #expect(failure?.code == .notConfigured)
        #expect(after.refundRequests.isEmpty)
    }
}
#endif
