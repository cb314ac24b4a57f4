import Crypto
import Foundation

/// A link to the web checkout page, signed by the server: it names the app, the customer, the
/// product, the address to return to once paid, and when it stops working (15 minutes after it
/// was made).
///
/// The signature is an HMAC-SHA256 over every field, under a key derived with HKDF-SHA256 from
/// the app's Stripe secret key (``Key``), so that only this server makes links and a link
/// changed in any field, or used for another app, is refused. The link's query carries
/// `appUserId`, `productId`, `returnUrl`, `expires` (Unix seconds) and `signature` (base64url);
/// the bundle ID is in the path. The same fields, in a JSON body, are what the page posts to pay.
struct CheckoutLink: Sendable, Hashable {
    /// How long a link works after it was made.
    static let lifetime: TimeInterval = 15 * 60

    /// The app.
    var bundleID: String
    /// The app's customer the purchase is for.
    var appUserID: String
    /// The App Store product whose grants the purchase shares.
    var productID: String
    /// Where the page sends the customer once paid.
    var returnURL: String
    /// When the link stops working, in whole seconds.
    var expiresAt: Date

    /// A link for `appUserID` to buy `productID` of `bundleID`, working until `expiresAt`
    /// (rounded down to the second, as the link carries it).
    init(bundleID: String, appUserID: String, productID: String, returnURL: String, expiresAt: Date) {
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.productID = productID
        self.returnURL = returnURL
        self.expiresAt = Date(timeIntervalSince1970: expiresAt.timeIntervalSince1970.rounded(.down))
    }

    /// The key an app's links are signed with.
    struct Key: Sendable {
        fileprivate let key: SymmetricKey

        /// The key derived from the app's Stripe secret key (HKDF-SHA256, its own label), so that
        /// the secret key itself signs nothing but Stripe requests.
        init(stripeSecretKey: String) {
            key = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: Data(stripeSecretKey.utf8)),
                info: Data("kakin checkout link v1".utf8), outputByteCount: 32)
        }
    }

    /// Why a link is refused.
    enum Failure: String, Error, Sendable {
        /// A field is missing or malformed.
        case incompleteLink
        /// The signature does not match the fields: changed, made for another app, or made up.
        case forgedLink
        /// The link is older than its lifetime.
        case expiredLink
    }

    /// The query names of the fields.
    enum Field {
        static let appUserID = "appUserId"
        static let productID = "productId"
        static let returnURL = "returnUrl"
        static let expires = "expires"
        static let signature = "signature"
    }

    /// The signature of the link under `key`, base64url without padding.
    func signature(with key: Key) -> String {
        Self.base64URL(Data(HMAC<SHA256>.authenticationCode(for: message, using: key.key)))
    }

    /// The link's fields and signature, as the query of the page's URL and the body of its payment.
    func fields(with key: Key) -> [String: String] {
        [
            Field.appUserID: appUserID, Field.productID: productID, Field.returnURL: returnURL,
            Field.expires: String(Int64(expiresAt.timeIntervalSince1970)), Field.signature: signature(with: key),
        ]
    }

    /// The link signed by `fields` for `bundleID`, once its signature is checked under `key` and
    /// it has not expired at `now`. The signature is checked first, so a forged link is told
    /// apart from a stale one only once it is known to be the server's.
    static func verify(
        _ fields: [String: String], bundleID: String, key: Key, now: Date
    ) throws(Failure) -> (link: CheckoutLink, signature: String) {
        guard let user = fields[Field.appUserID], let product = fields[Field.productID],
            let returnURL = fields[Field.returnURL], let expiresText = fields[Field.expires],
            let expires = Int64(expiresText), String(expires) == expiresText,
            let signature = fields[Field.signature], let mac = base64URLDecoded(signature), mac.count == 32
        else { throw .incompleteLink }
        let link = CheckoutLink(
            bundleID: bundleID, appUserID: user, productID: product, returnURL: returnURL,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)))
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: link.message, using: key.key) else {
            throw .forgedLink
        }
        guard now < link.expiresAt else { throw .expiredLink }
        return (link, signature)
    }

    /// What is signed: a label, then each field as its byte count (8 bytes, big-endian) and its
    /// UTF-8 bytes, so that no two links share a message.
    private var message: Data {
        var data = Data("kakin-checkout-link-v1".utf8)
        let parts = [bundleID, appUserID, productID, returnURL, String(Int64(expiresAt.timeIntervalSince1970))]
        for part in parts {
            let bytes = Data(part.utf8)
            withUnsafeBytes(of: UInt64(bytes.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(bytes)
        }
        return data
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URLDecoded(_ text: String) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            return nil
        }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
