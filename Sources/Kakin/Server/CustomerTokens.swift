import Foundation
import KakinWire

/// Gets a customer token for an identified customer: a short-lived token the app's own backend
/// signs for `appUserID`, which the purchase server checks before it answers about that customer.
///
/// The SDK calls it only for identified customers (never for an anonymous `$kakin_anon_…` ID),
/// only when it has no token for that customer that is still good, and at most once more when the
/// server refuses a token. Typically it asks the app's backend, over the session the user signed
/// in with, for a token (see <doc:Identity>). Whatever it throws becomes a retryable
/// ``KakinError/Code/unauthorized`` error: a purchase waits in the outbox until a token can be had.
public typealias CustomerTokenProvider = @Sendable (_ appUserID: String) async throws -> String

/// The customer tokens a client has been given, by app user ID: each is reused until shortly
/// before it expires, and concurrent requests for one customer wait for one call of the provider.
///
/// A token's expiry is read from its payload (`exp`, a JSON Web Token's claim) without checking its
/// signature: the server does that. A token whose expiry cannot be read is used for one request only.
actor CustomerTokens {
    private struct Kept {
        var token: String
        /// When to stop using it: a minute before `exp`, or halfway for a token that lives less
        /// than two minutes.
        var renewAt: Date
    }

    private let provider: CustomerTokenProvider
    private let now: @Sendable () -> Date
    private var kept: [String: Kept] = [:]
    private var pending: [String: Task<String, any Error>] = [:]

    /// The most of a token's life cut off before its expiry, so it is not sent as it expires.
    static let renewalMargin: TimeInterval = 60

    init(provider: @escaping CustomerTokenProvider, now: @escaping @Sendable () -> Date) {
        self.provider = provider
        self.now = now
    }

    /// A token for `appUserID`: the kept one while it is good, else a new one from the provider.
    ///
    /// - Throws: ``KakinError/Code/unauthorized`` (retryable) when the provider fails.
    func token(for appUserID: String) async throws(KakinError) -> String {
        if let kept = kept[appUserID], now() < kept.renewAt { return kept.token }
        let task: Task<String, any Error>
        if let running = pending[appUserID] {
            task = running
        } else {
            let provider = self.provider
            task = Task { try await provider(appUserID) }
            pending[appUserID] = task
        }
        let result = await task.result
        if pending[appUserID] == task { pending[appUserID] = nil }
        switch result {
        case .success(let token):
            keep(token, for: appUserID)
            return token
        case .failure(let error):
            throw KakinError(
                .unauthorized, "no customer token for \(appUserID): the app's token provider failed: \(error)",
                isRetryable: true)
        }
    }

    /// Forgets `token` after the server refused it, so the next request asks the provider again.
    /// A newer token another request got meanwhile is kept.
    func discard(_ token: String, of appUserID: String) {
        if kept[appUserID]?.token == token { kept[appUserID] = nil }
    }

    private func keep(_ token: String, for appUserID: String) {
        let obtained = now()
        guard let expiry = Self.expiry(of: token), expiry > obtained else {
            kept[appUserID] = nil
            return
        }
        let margin = min(Self.renewalMargin, expiry.timeIntervalSince(obtained) / 2)
        kept[appUserID] = Kept(token: token, renewAt: expiry.addingTimeInterval(-margin))
    }

    /// The `exp` claim of a JSON Web Token (seconds since 1970), read without verifying anything;
    /// `nil` for anything else.
    static func expiry(of token: String) -> Date? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if base64.utf8.count % 4 != 0 { base64 += String(repeating: "=", count: 4 - base64.utf8.count % 4) }
        struct Claims: Decodable { var exp: Double? }
        guard let payload = Data(base64Encoded: base64),
            let exp = (try? JSONDecoder().decode(Claims.self, from: payload))?.exp
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}
