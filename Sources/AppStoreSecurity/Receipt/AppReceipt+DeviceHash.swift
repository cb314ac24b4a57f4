public import AppStoreModels
import Crypto
public import Foundation

extension AppReceipt {
    /// The device identifier of an iOS, iPadOS, tvOS, watchOS or visionOS device: the 16 bytes of
    /// `identifierForVendor`. (A Mac uses the 6 bytes of its primary network interface's address.)
    public static func deviceIdentifier(from uuid: UUID) -> Data {
        withUnsafeBytes(of: uuid.uuid) { Data($0) }
    }

    /// The SHA-1 hash attribute 5 must hold on the device with `deviceIdentifier`:
    /// `SHA1(deviceIdentifier ‖ opaqueValue ‖ bundleIDBytes)`.
    ///
    /// The hash ties a receipt to one device, so that a receipt copied to another device fails.
    public func deviceHash(for deviceIdentifier: some DataProtocol) -> Data {
        var hasher = Insecure.SHA1()
        hasher.update(data: Data(deviceIdentifier))
        hasher.update(data: opaqueValue)
        hasher.update(data: bundleIDBytes)
        return Data(hasher.finalize())
    }

    /// Sets `sha1Hash` for the device with `deviceIdentifier`, as the store does when it issues a receipt.
    public mutating func setDeviceHash(for deviceIdentifier: some DataProtocol) {
        sha1Hash = deviceHash(for: deviceIdentifier)
    }

    /// Checks that `sha1Hash` belongs to the device with `deviceIdentifier`.
    ///
    /// - Throws: ``AppStoreSecurityError/Code/deviceHashMismatch`` when it does not.
    public func verifyDeviceHash(for deviceIdentifier: some DataProtocol) throws(AppStoreSecurityError) {
        let expected = deviceHash(for: deviceIdentifier)
        guard expected == sha1Hash else {
            throw AppStoreSecurityError(
                .deviceHashMismatch,
                "the receipt was issued for another device, or its opaque value or bundle ID changed",
                expected: expected.hexString, found: sha1Hash.hexString)
        }
    }
}

extension Data {
    /// Lowercase hexadecimal, for error messages.
    fileprivate var hexString: String {
        map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined()
    }
}
