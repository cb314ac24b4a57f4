import Foundation
import Testing

@testable import Kakin

/// The SDK encodes what it puts in a path, and reads the server's answers as the server writes them.
@Suite struct ServerClientEncodingTests {
    @Test func pathSegmentsArePercentEncodedOneByOne() {
        let client = KakinServerClient(
            baseURL: URL(string: "http://127.0.0.1:8080/base/")!, bundleID: "com.example.kakin", publishableKey: "pk",
            serverKey: nil)
        let url = client.url(.customer("a b/ç?#%"), ["bundleId": "com.example.kakin"])
        #expect(
            url.absoluteString
                == "http://127.0.0.1:8080/base/v1/customers/a%20b%2F%C3%A7%3F%23%25?bundleId=com.example.kakin")
    }

    @Test func aCustomerWhoseIDNeedsEncodingIsReadBack() async throws {
        let stack = try await LiveStack()
        try await stack.run { _, serverURL in
            let customer = try await stack.client(serverURL).customer(appUserID: "a b/ç")
            #expect(customer.appUserID == "a b/ç")
            #expect(customer.entitlements.isEmpty)
        }
    }
}
