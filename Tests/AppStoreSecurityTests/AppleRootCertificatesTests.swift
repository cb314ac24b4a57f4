import AppStoreSecurity
import Crypto
import Foundation
import Testing

@Suite struct AppleRootCertificatesTests {
    @Test func appleRootCAG3HasThePublishedFingerprint() {
        let fingerprint = SHA256.hash(data: AppleRootCertificates.appleRootCAG3DER)
            .map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(
            fingerprint
                == "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79")
    }
}
