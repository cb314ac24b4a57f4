import Foundation
import HTTPTypes
import Hummingbird
import KakinCore
import KakinLedger
import KakinWire

/// Who a request about a customer may be about: the one rule every customer route applies after
/// the key, so that the publishable key, which ships in every copy of the app, opens no more than
/// a device needs for its own customer.
///
/// - An app's secret key (its backend) may name any customer of the app.
/// - An anonymous customer (`$kakin_anon_` and 32 lowercase hexadecimal digits, as the SDK makes
///   it) is protected by its random ID: anything else with that prefix is refused.
/// - An identified customer of an app with customer tokens needs a token the app's backend signed
///   for that customer (`X-Kakin-Customer-Token`); an anonymous ID that became an identified
///   customer is about that customer, and needs its token too.
extension KakinServerHTTP.Caller {
    /// The customer a request naming `requested` is about (the identified customer an anonymous ID
    /// became, if it did), once the request has shown it may act for them.
    ///
    /// - Throws: ``ServerError/Code/invalidRequest`` for an ID that is not one (cause
    ///   `malformedAnonymousID` for a bad anonymous one); ``ServerError/Code/unauthorized`` with a
    ///   ``CustomerToken/Failure`` as cause when the app requires a token the request lacks.
    ///
    /// With `checksConsent` (every route but the uploads, which read nothing more than they did),
    /// a customer token issued no later than a parent's withdrawal of consent for the customer
    /// (`RESCIND_CONSENT`) is refused: 401, cause `consentRescinded`. The app's backend issues a
    /// new one once a parent consents again.
    func customer(
        _ requested: String, of app: AppConfiguration, request: Request, service: PurchaseService,
        checksConsent: Bool = true
    ) async throws(ServerError) -> String {
        try Self.checkCustomerID(requested)
        let customer = try await service.customerID(requested, bundleID: app.bundleID)
        let claims = try authorize(customer, of: app, request: request, now: service.realNow())
        if checksConsent, let claims {
            let rescission: ConsentRescission?
            do {
                rescission = try await service.customers.consentRescission(bundleID: app.bundleID, appUserID: customer)
            } catch { throw ServerError(error) }
            if let rescission, Double(claims.iat) <= rescission.rescindedAt.timeIntervalSince1970 {
                throw ServerError(
                    .unauthorized,
                    "the customer token was issued before a parent withdrew consent for this customer; "
                        + "a token issued since is needed",
                    cause: "consentRescinded")
            }
        }
        return customer
    }

    /// Checks that the request may act for `customer` (an ID already resolved): always with the
    /// app's secret key; without it, with a valid customer token where the app has them. The
    /// claims of the token the request carried, if it carried one that was checked.
    @discardableResult
    func authorize(
        _ customer: String, of app: AppConfiguration, request: Request, now: Date
    ) throws(ServerError) -> CustomerToken.Claims? {
        guard !isBackend(of: app), !AnonymousAppUserID.isAnonymous(customer), let tokens = app.customerTokens else {
            return nil
        }
        let token = request.headers[Self.customerTokenHeader].flatMap { $0.isEmpty ? nil : $0 }
        do throws(CustomerToken.Failure) {
            guard let token else {
                if tokens.required { throw CustomerToken.Failure.customerTokenMissing }
                return nil
            }
            return try CustomerToken.verify(
                token, appUserID: customer, bundleID: app.bundleID, secret: tokens.secret, now: now)
        } catch {
            throw ServerError(
                .unauthorized,
                error == .customerTokenMissing
                    ? "\(app.bundleID) requires a customer token (\(KakinHeader.customerToken)) for identified customers"
                    : "the customer token is not valid for this customer: \(error.rawValue)",
                cause: error.rawValue)
        }
    }

    /// Whether the caller may read signed transactions (JWS), which a holder could post as their
    /// own: the app's backend only.
    func checkMayReadSignedTransactions(of app: AppConfiguration) throws(ServerError) {
        guard isBackend(of: app) else {
            throw ServerError(
                .forbidden,
                "signed transactions are answered to the secret key only (the SDK holds its own from the store)",
                cause: "secretKeyRequired")
        }
    }

    /// A customer ID is 1 to 256 characters without line breaks or NUL; one with the anonymous
    /// prefix is exactly what the SDK makes.
    static func checkCustomerID(_ appUserID: String) throws(ServerError) {
        try RequestReader.checkUserID(appUserID)
        if AnonymousAppUserID.isAnonymous(appUserID), !AnonymousAppUserID.isWellFormed(appUserID) {
            throw ServerError(
                .invalidRequest,
                "an anonymous ID is \(AnonymousAppUserID.prefix) and 32 lowercase hexadecimal digits, as the SDK makes it",
                cause: "malformedAnonymousID")
        }
    }

    private static let customerTokenHeader = HTTPField.Name(KakinHeader.customerToken)!
}
