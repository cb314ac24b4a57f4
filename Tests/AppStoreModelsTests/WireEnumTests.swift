import AppStoreModels
import Foundation
import Testing

@Suite struct WireEnumTests {
    @Test func unknownValueSurvivesRoundTrip() throws {
        let data = Data(#"["Sandbox","Martian"]"#.utf8)
        let values = try JSONDecoder().decode([AppStoreEnvironment].self, from: data)
        #expect(values[0] == .sandbox)
        #expect(values[0].isKnown)
        #expect(!values[1].isKnown)
        #expect(values[1].rawValue == "Martian")
        #expect(try JSONEncoder().encode(values) == data)
    }
}
