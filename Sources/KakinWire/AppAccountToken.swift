import Crypto
public import Foundation

/// The app account token Kakin gives a customer's purchases: a UUID derived from the app user ID
/// (the first 16 bytes of SHA-256 over `kakin.appAccountToken:<app user ID>`, shaped as a
/// version 8 UUID). The same on every device and on the server, and it reveals nothing of the ID.
///
/// The SDK passes it with every purchase; the server sets it on purchases that arrived without
/// one, or that moved to another customer, through the App Store Server API.
public enum AppAccountToken {
    /// The token of `appUserID`.
    public static func derived(from appUserID: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data("kakin.appAccountToken:\(appUserID)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
