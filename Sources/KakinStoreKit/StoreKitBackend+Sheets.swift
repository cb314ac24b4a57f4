#if canImport(StoreKit)
public import Kakin
import Foundation
import StoreKit

#if canImport(UIKit)
    import UIKit
#endif

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
extension StoreKitBackend {
    /// `AppStore.showManageSubscriptions(in:)`, or `showManageSubscriptions(in:subscriptionGroupID:)`
    /// for one group, in the backend's window scene. Throws `KakinError/Code/notConfigured` when
    /// the app gave no scene, `KakinError/Code/unsupported` where StoreKit has no such sheet
    /// (macOS, tvOS, watchOS), and StoreKit's errors mapped as `kakinError(_:)` maps them; a
    /// customer who closes the sheet is no error.
    public func showManageSubscriptions(subscriptionGroupID: String?) async throws {
        #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || os(Linux)
            guard let windowScene else { throw Self.noScene("the manage-subscriptions sheet") }
            do {
                try await Self.showManageSubscriptions(subscriptionGroupID, in: windowScene)
            } catch StoreKitError.userCancelled {
                return
            } catch {
                throw Self.kakinError(error)
            }
        #else
            throw KakinError(.unsupported, "StoreKit has no manage-subscriptions sheet in a window scene here")
        #endif
    }

    /// `Transaction.beginRefundRequest(for:in:)` in the backend's window scene. The customer's
    /// answer is the outcome; a request the App Store already has is `RefundRequestOutcome/alreadyRequested`.
    /// Throws as `showManageSubscriptions(subscriptionGroupID:)` does, and
    /// `KakinError/Code/storeFailure` for an ID that is not a StoreKit transaction ID.
    public func beginRefundRequest(for transactionID: String) async throws -> RefundRequestOutcome {
        guard let id = UInt64(transactionID) else {
            throw KakinError(.storeFailure, "\(transactionID) is not a StoreKit transaction ID", storeKitCode: 3)
        }
        #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || os(Linux)
            guard let windowScene else { throw Self.noScene("the refund request sheet") }
            let status: Transaction.RefundRequestStatus
            do {
                status = try await Self.beginRefundRequest(for: id, in: windowScene)
            } catch Transaction.RefundRequestError.duplicateRequest {
                return .alreadyRequested
            } catch StoreKitError.userCancelled {
                return .cancelled
            } catch {
                throw Self.kakinError(error)
            }
            switch status {
            case .success: return .requested
            case .userCancelled: return .cancelled
            @unknown default: return .cancelled
            }
        #else
            throw KakinError(.unsupported, "StoreKit has no refund request sheet in a window scene here (\(id))")
        #endif
    }

    #if (canImport(UIKit) && !os(watchOS) && !os(tvOS)) || os(Linux)
        @MainActor
        private static func showManageSubscriptions(
            _ groupID: String?, in scene: @MainActor @Sendable () -> UIWindowScene?
        ) async throws {
            guard let scene = scene() else { throw noScene("the manage-subscriptions sheet") }
            if let groupID {
                try await AppStore.showManageSubscriptions(in: scene, subscriptionGroupID: groupID)
            } else {
                try await AppStore.showManageSubscriptions(in: scene)
            }
        }

        @MainActor
        private static func beginRefundRequest(
            for id: UInt64, in scene: @MainActor @Sendable () -> UIWindowScene?
        ) async throws -> Transaction.RefundRequestStatus {
            guard let scene = scene() else { throw noScene("the refund request sheet") }
            return try await Transaction.beginRefundRequest(for: id, in: scene)
        }
    #endif
}
#endif
