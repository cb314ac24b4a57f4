#if canImport(StoreKit)
public import Kakin
import Foundation
import StoreKit

#if canImport(UIKit)
    import UIKit
#endif
#if os(macOS)
    import AppKit
#endif

// The App Store's sheets. Each is shown on the main actor, where StoreKit declares them, and what it
// returns is mapped there to the SDK's own `Sendable` values: StoreKit's results
// (`Transaction.RefundRequestStatus`, `VerificationResult<Transaction>`) are documented without
// `Sendable`, so none crosses to another isolation. The iOS 27 SDK's forms (Xcode 27, Swift 6.4) are
// compiled only with it, so the package still builds with Xcode 26.

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
extension StoreKitBackend {
    /// `AppStore.showManageSubscriptions(in:)`, or `showManageSubscriptions(in:subscriptionGroupID:)`
    /// for one group, in the backend's window scene; on macOS 27.3 and later
    /// `showManageSubscriptions(from:)` on the backend's window. Throws `KakinError/Code/notConfigured`
    /// when the app gave no scene or window, `KakinError/Code/unsupported` where StoreKit has no such
    /// sheet (macOS before 27.3, tvOS, watchOS), and StoreKit's errors mapped as `kakinError(_:)` maps
    /// them; a customer who closes the sheet is no error.
    public func showManageSubscriptions(subscriptionGroupID: String?) async throws {
        do {
            try await Self.showManageSubscriptions(subscriptionGroupID, presenter: presenter)
        } catch StoreKitError.userCancelled {
            return
        } catch {
            throw Self.kakinError(error)
        }
    }

    /// `Transaction.beginRefundRequest(for:in:)` in the backend's window scene, or in the content
    /// view controller of its window on macOS. The customer's answer is the outcome; a request the
    /// App Store already has is `RefundRequestOutcome/alreadyRequested`. Throws as
    /// `showManageSubscriptions(subscriptionGroupID:)` does, and `KakinError/Code/storeFailure` for
    /// an ID that is not a StoreKit transaction ID.
    public func beginRefundRequest(for transactionID: String) async throws -> RefundRequestOutcome {
        guard let id = UInt64(transactionID) else {
            throw KakinError(.storeFailure, "\(transactionID) is not a StoreKit transaction ID", storeKitCode: 3)
        }
        do {
            return try await Self.beginRefundRequest(for: id, presenter: presenter)
        } catch Transaction.RefundRequestError.duplicateRequest {
            return .alreadyRequested
        } catch StoreKitError.userCancelled {
            return .cancelled
        } catch {
            throw Self.kakinError(error)
        }
    }

    /// The offer code redemption sheet. Since iOS, macOS and visionOS 27,
    /// `AppStore.presentOfferCodeRedeemSheet(from:options:)` returns the transaction the redemption
    /// made (`OfferCodeRedemption/redeemed(_:)`), presented from the view controller on top of the
    /// scene's key window, or on the window on macOS; before, `presentOfferCodeRedeemSheet(in:)` (or
    /// `(from:)` with the window's content view controller on macOS) only closes
    /// (`OfferCodeRedemption/closed`), and a redeemed code arrives through `Transaction.updates`. A
    /// customer who cancels is `OfferCodeRedemption/cancelled`. Throws as
    /// `showManageSubscriptions(subscriptionGroupID:)` does.
    public func presentOfferCodeRedeemSheet() async throws -> OfferCodeRedemption {
        do {
            return try await Self.presentOfferCodeRedeemSheet(
                presenter: presenter, returningTransaction: Self.offerCodeSheetReturnsTransaction)
        } catch StoreKitError.userCancelled {
            return .cancelled
        } catch {
            throw Self.kakinError(error)
        }
    }

    /// Whether this system's StoreKit returns the transaction an offer code redemption made
    /// (iOS, macOS and visionOS 27, with the SDK that declares it).
    static var offerCodeSheetReturnsTransaction: Bool {
        #if compiler(>=6.4) || os(Linux)
            if #available(iOS 27.0, macOS 27.0, visionOS 27.0, *) { return true }
        #endif
        return false
    }

    /// What the backend has to show `what` in when the app gave nothing.
    static func nothingToPresentIn(_ what: String) -> KakinError {
        #if os(tvOS) || os(watchOS)
            KakinError(.unsupported, "StoreKit has no \(what) here")
        #elseif os(macOS)
            noWindow(what)
        #else
            noScene(what)
        #endif
    }

    /// What a sheet is shown in, asked of the app on the main actor: its window scene (iOS,
    /// visionOS) or its window (macOS). None on tvOS and watchOS, which have no App Store sheets.
    enum SheetHost {
        #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || os(Linux)
            case scene(UIWindowScene)
        #endif
        #if os(macOS) || os(Linux)
            case window(NSWindow)
        #endif
    }

    /// The scene or window the app has for `what` now; throws `KakinError/Code/notConfigured` when
    /// it gave or has none, and `KakinError/Code/unsupported` on tvOS and watchOS.
    @MainActor
    static func host(for what: String, in presenter: Presenter) throws -> SheetHost {
        switch presenter {
        case .none:
            throw nothingToPresentIn(what)
        #if (canImport(UIKit) && !os(watchOS)) || os(Linux)
            #if os(tvOS)
                case .windowScene:
                    throw KakinError(.unsupported, "StoreKit has no \(what) on tvOS")
            #else
                case .windowScene(let scene):
                    guard let scene = scene() else { throw noScene(what) }
                    return .scene(scene)
            #endif
        #endif
        #if os(macOS) || os(Linux)
            case .window(let window):
                guard let window = window() else { throw noWindow(what) }
                return .window(window)
        #endif
        }
    }

    @MainActor
    static func showManageSubscriptions(_ groupID: String?, presenter: Presenter) async throws {
        let what = "the manage-subscriptions sheet"
        switch try host(for: what, in: presenter) {
        #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || os(Linux)
            case .scene(let scene):
                if let groupID {
                    try await AppStore.showManageSubscriptions(in: scene, subscriptionGroupID: groupID)
                } else {
                    try await AppStore.showManageSubscriptions(in: scene)
                }
        #endif
        #if os(macOS) || os(Linux)
            case .window(let window):
                #if compiler(>=6.4) || os(Linux)
                    if #available(macOS 27.3, *) {
                        if let groupID {
                            try await AppStore.showManageSubscriptions(from: window, subscriptionGroupID: groupID)
                        } else {
                            try await AppStore.showManageSubscriptions(from: window)
                        }
                        return
                    }
                #endif
                throw KakinError(.unsupported, "StoreKit shows \(what) on a Mac from macOS 27.3")
        #endif
        }
    }

    @MainActor
    static func beginRefundRequest(for id: UInt64, presenter: Presenter) async throws -> RefundRequestOutcome {
        let what = "the refund request sheet"
        let status: Transaction.RefundRequestStatus
        switch try host(for: what, in: presenter) {
        #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || os(Linux)
            case .scene(let scene):
                status = try await Transaction.beginRefundRequest(for: id, in: scene)
        #endif
        #if os(macOS) || os(Linux)
            case .window(let window):
                guard let controller = window.contentViewController else { throw noWindow(what) }
                status = try await Transaction.beginRefundRequest(for: id, in: controller)
        #endif
        }
        switch status {
        case .success: return .requested
        case .userCancelled: return .cancelled
        @unknown default: return .cancelled
        }
    }

    /// The offer code sheet in the form `returningTransaction` names, when this system has it.
    @MainActor
    static func presentOfferCodeRedeemSheet(
        presenter: Presenter, returningTransaction: Bool
    ) async throws -> OfferCodeRedemption {
        let what = "the offer code redemption sheet"
        switch try host(for: what, in: presenter) {
        #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || os(Linux)
            case .scene(let scene):
                #if compiler(>=6.4) || os(Linux)
                    if returningTransaction, #available(iOS 27.0, visionOS 27.0, *) {
                        guard let controller = topViewController(in: scene) else { throw noScene(what) }
                        return .redeemed(transaction(try await AppStore.presentOfferCodeRedeemSheet(from: controller)))
                    }
                #endif
                try await AppStore.presentOfferCodeRedeemSheet(in: scene)
                return .closed
        #endif
        #if os(macOS) || os(Linux)
            case .window(let window):
                #if compiler(>=6.4) || os(Linux)
                    if returningTransaction, #available(macOS 27.0, *) {
                        return .redeemed(transaction(try await AppStore.presentOfferCodeRedeemSheet(from: window)))
                    }
                #endif
                guard let controller = window.contentViewController else { throw noWindow(what) }
                try await AppStore.presentOfferCodeRedeemSheet(from: controller)
                return .closed
        #endif
        }
    }

    #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || os(Linux)
        /// The view controller a sheet is presented from: the one on top of the scene's key window.
        @MainActor
        static func topViewController(in scene: UIWindowScene) -> UIViewController? {
            var top = scene.keyWindow?.rootViewController
            while let presented = top?.presentedViewController { top = presented }
            return top
        }
    #endif
}
#endif
