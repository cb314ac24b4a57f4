import Foundation

extension SandboxBackend {
    /// The offer code redemption sheet, as StoreKit shows it since iOS 27: ``offerCodeSheet`` gives
    /// the code the customer types, the sandbox redeems it for the tester
    /// (`POST v1/device/testers/{tester}/offer-codes/redeem`, the offer's terms checked as the App
    /// Store checks them) and the transaction it made comes back ``OfferCodeRedemption/redeemed(_:)``;
    /// a customer who types nothing has ``OfferCodeRedemption/cancelled``. The sandbox's refusals
    /// (a code it does not know, one the tester used already) are thrown as ``KakinError`` with
    /// StoreKit's code, as a purchase's are. Without ``offerCodeSheet``, throws
    /// ``KakinError/Code/unsupported``.
    public func presentOfferCodeRedeemSheet() async throws -> OfferCodeRedemption {
        guard let offerCodeSheet else {
            throw KakinError(.unsupported, "this sandbox backend has no offer code sheet (give it offerCodeSheet)")
        }
        guard let code = await offerCodeSheet() else { return .cancelled }
        let reply = try await http.send(
            "POST", url("v1/device/testers/\(testerID)/offer-codes/redeem"),
            body: try JSONEncoder().encode(["code": code]))
        switch try paymentResult(reply) {
        case .purchased(let transaction): return .redeemed(transaction)
        case .cancelled: return .cancelled
        case .pending: return .closed
        }
    }
}
