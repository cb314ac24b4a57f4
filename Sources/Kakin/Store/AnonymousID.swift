public import Foundation
import KakinCore
import KakinWire

/// The customer this device is signed in as, kept in the storage directory so that it survives
/// launches: an anonymous ID the SDK made (`$kakin_anon_` and 32 lowercase hexadecimal digits),
/// or the identified ID the app last logged in.
///
/// ``KakinStore`` reads it when it is configured without an app user ID, and writes it at
/// ``KakinStore/logIn(_:)`` and ``KakinStore/logOut()``. The file is `app-user-id` in the
/// storage directory, written atomically.
public struct DeviceIdentity: Sendable {
    /// The storage directory the ID is kept in.
    public let directory: URL

    /// The identity of the device whose storage directory is `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The file the ID is kept in.
    var file: URL { directory.appendingPathComponent("app-user-id") }

    /// The ID kept on the device, or `nil` when none is (a first launch, or an unreadable file).
    public func stored() -> String? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// The ID kept on the device; on the first launch a new anonymous ID, kept from then on.
    public func current() throws(KakinError) -> String {
        if let stored = stored() { return stored }
        let made = AnonymousAppUserID.make()
        try save(made)
        return made
    }

    /// Keeps `appUserID` as the device's customer.
    public func save(_ appUserID: String) throws(KakinError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(appUserID.utf8).write(to: file, options: .atomic)
        } catch {
            throw KakinError(.storage, "the app user ID cannot be kept in \(directory.path): \(error)")
        }
    }
}
