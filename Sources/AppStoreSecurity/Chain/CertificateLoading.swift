public import Foundation
import SwiftASN1
public import X509

extension Certificate {
    /// Reads one certificate from DER bytes or from PEM text (`-----BEGIN CERTIFICATE-----`).
    ///
    /// Command-line users hand over whatever Apple or OpenSSL gave them; both encodings are accepted.
    public static func load(derOrPEM data: Data) throws(AppStoreSecurityError) -> Certificate {
        if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN") {
            do { return try Certificate(pemEncoded: text) } catch {
                throw AppStoreSecurityError(.malformedInput, "the PEM text is not a certificate: \(error)")
            }
        }
        do { return try Certificate(derEncoded: Array(data)) } catch {
            throw AppStoreSecurityError(.malformedInput, "the bytes are not a DER certificate: \(error)")
        }
    }

    /// The certificate's DER encoding.
    public func derEncoded() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(self)
        return serializer.serializedBytes
    }
}
