import AppStoreSecurity
import AppStoreTesting
import Foundation

/// One authority per test process: generating P-384 keys is not free, and the tests only read it.
enum TestAuthority {
    /// A fixed instant inside the authority's validity, used as "now" by the tests.
    static let now = Date(timeIntervalSince1970: 1_790_000_000)  // 2026-09-21
    static let shared: SandboxCertificateAuthority = try! SandboxCertificateAuthority.generate(now: now)
    static let foreign: SandboxCertificateAuthority = try! SandboxCertificateAuthority.generate(
        name: "Elsewhere", now: now)
}
