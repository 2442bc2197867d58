// The nearest city: distances, the 50 km limit, the antimeridian, the poles, and the real libgeonames data.
@testable import FolderImport
import XCTest

final class NearestCityTests: XCTestCase {
    let cities = NearestCity(cities: [
        City(name: "Paris", state: "Île-de-France", country: "France", timezone: "Europe/Paris", latitude: 48.8534, longitude: 2.3488),
        City(name: "Versailles", state: "Île-de-France", country: "France", timezone: "Europe/Paris", latitude: 48.8014, longitude: 2.1301),
        City(name: "Suva", state: "Central", country: "Fiji", timezone: "Pacific/Fiji", latitude: -18.1416, longitude: 178.4415),
        City(name: "Taveuni", state: "", country: "Fiji", timezone: "Pacific/Fiji", latitude: -16.8, longitude: -179.97),
        City(name: "Longyearbyen", state: "Svalbard", country: "Norway", timezone: "Arctic/Longyearbyen", latitude: 78.2232, longitude: 15.6267),
        City(name: "Broken", state: "", country: "", timezone: "", latitude: .nan, longitude: 200),
    ])

    func testNearestWithinTheLimit() {
        XCTAssertEqual(cities.count, 5, "a city with impossible coordinates is left out")
        XCTAssertEqual(cities.nearest(latitude: 48.86, longitude: 2.35)?.name, "Paris")
        XCTAssertEqual(cities.nearest(latitude: 48.80, longitude: 2.12)?.name, "Versailles")
        XCTAssertEqual(cities.nearest(latitude: 48.86, longitude: 2.35)?.regionName, "Île-de-France")
        XCTAssertNil(cities.nearest(latitude: 47.0, longitude: 2.35), "about 200 km from Paris")
    }

    func testAntimeridianPolesAndNonsense() {
        XCTAssertEqual(cities.nearest(latitude: -16.8, longitude: 179.9)?.name, "Taveuni", "across the antimeridian")
        XCTAssertEqual(cities.nearest(latitude: -16.8, longitude: 179.9)?.regionName, "Fiji", "no state: the country")
        XCTAssertEqual(cities.nearest(latitude: 78.5, longitude: 16.0)?.name, "Longyearbyen")
        XCTAssertNil(cities.nearest(latitude: 90, longitude: 0))
        XCTAssertNil(cities.nearest(latitude: -90, longitude: 180))
        XCTAssertNil(cities.nearest(latitude: .nan, longitude: 0))
        XCTAssertNil(cities.nearest(latitude: 91, longitude: 0))
    }

    /// Within the nearest city's state, a city names the photos nearest to it for its size: a big city's
    /// suburbs say the city, a town's centre the town; across a state's border the nearest city stays.
    func testABigCityNamesItsSuburbsButNotTheTownsAroundIt() {
        let cities = NearestCity(cities: [
            City(name: "Metropolis", state: "A", country: "X", timezone: "", latitude: 0, longitude: 0, population: 4_000_000),
            City(name: "Suburb", state: "A", country: "X", timezone: "", latitude: 0, longitude: 0.15, population: 20_000),
            City(name: "Across", state: "B", country: "X", timezone: "", latitude: 0, longitude: -0.2, population: 30_000),
        ])
        // 0.1° of longitude at the equator is 11.1 km.
        XCTAssertEqual(cities.nearest(latitude: 0, longitude: 0.1)?.name, "Metropolis", "11 km from it, 5.6 km from the town")
        XCTAssertEqual(cities.nearest(latitude: 0, longitude: 0.145)?.name, "Suburb", "in the town's centre")
        XCTAssertEqual(cities.nearest(latitude: 0, longitude: 0.35)?.name, "Suburb", "39 km from the city, 22 from the town: neither reaches it, the nearer names it")
        // 4.4 km from the town (which reaches 2.6 km), 17.8 km from the city (which reaches 20): the town's state.
        XCTAssertEqual(cities.nearest(latitude: 0, longitude: -0.16)?.name, "Across", "another state's town is nearer")
        XCTAssertEqual(cities.nearest(latitude: 0, longitude: -0.16)?.regionName, "B")
    }

    func testLibgeonamesNamesPhotosByTheirCityNotItsNearestSuburb() {
        let all = NearestCity(cities: GeonamesCities.all)
        XCTAssertEqual(all.nearest(latitude: 18.9220, longitude: 72.8347)?.name, "Mumbai", "the Gateway of India, not Uran")
        XCTAssertEqual(all.nearest(latitude: 35.7148, longitude: 139.7967)?.name, "Tokyo", "Asakusa, not Urayasu")
        XCTAssertEqual(all.nearest(latitude: 38.6916, longitude: -9.2160)?.name, "Lisbon", "Belém's tower, not Algés")
        XCTAssertEqual(all.nearest(latitude: 48.8049, longitude: 2.1204)?.name, "Versailles", "its palace, not Paris")
        XCTAssertEqual(all.nearest(latitude: 40.7282, longitude: -74.0700)?.regionName, "New Jersey", "not New York")
    }

    func testLibgeonamesCities() {
        let all = NearestCity(cities: GeonamesCities.all)
        XCTAssertGreaterThan(all.count, 20_000)
        XCTAssertEqual(all.nearest(latitude: 35.6895, longitude: 139.6917)?.country, "Japan")
        XCTAssertEqual(all.nearest(latitude: -33.8688, longitude: 151.2093)?.regionName, "New South Wales")
        XCTAssertNil(all.nearest(latitude: 0.5, longitude: -140), "the middle of the Pacific")
    }

    /// A state name of several countries is one region per country: the country with most cities of that name
    /// keeps it, the others' say their country.
    func testRegionsOfOneNameInTwoCountriesAreTwoRegions() {
        let all = NearestCity(cities: GeonamesCities.all)
        let lahore = all.nearest(latitude: 31.5497, longitude: 74.3436), ludhiana = all.nearest(latitude: 30.9010, longitude: 75.8573)
        XCTAssertEqual(lahore?.country, "Pakistan")
        XCTAssertEqual(ludhiana?.country, "India")
        XCTAssertNotEqual(lahore?.regionName, ludhiana?.regionName)
        XCTAssertEqual(Set([lahore?.regionName, ludhiana?.regionName].compactMap { $0 }).intersection(["Punjab"]).count, 1)
        let copenhagen = all.nearest(latitude: 55.6761, longitude: 12.5683), reykjavik = all.nearest(latitude: 64.1466, longitude: -21.9426)
        XCTAssertNotEqual(copenhagen?.regionName, reykjavik?.regionName)
        XCTAssertEqual(all.nearest(latitude: -33.8688, longitude: 151.2093)?.regionName, "New South Wales", "a name of one country stays")
        let made = GeonamesCities.regionsToldApart([
            City(name: "A", state: "Punjab", country: "India", timezone: "", latitude: 0, longitude: 0),
            City(name: "B", state: "Punjab", country: "India", timezone: "", latitude: 0, longitude: 0),
            City(name: "C", state: "Punjab", country: "Pakistan", timezone: "", latitude: 0, longitude: 0),
        ])
        XCTAssertEqual(made.map(\.regionName), ["Punjab", "Punjab", "Punjab (Pakistan)"])
    }

    /// City-states and territories libgeonames leaves out: filed under their own name, not a neighbour's.
    func testCityStatesAreTheirOwnRegion() {
        let all = NearestCity(cities: GeonamesCities.all)
        for (latitude, longitude, region) in [(1.2834, 103.8607, "Singapore"), (1.3521, 103.8198, "Singapore"),
                                              (1.4360, 103.7860, "Singapore"), (22.1937, 113.5399, "Macau"),
                                              (36.1408, -5.3536, "Gibraltar"), (18.0237, -63.0458, "Sint Maarten"),
                                              (1.4655, 103.7578, "Johor"), (22.2783, 114.1747, "Central and Western")] {
            XCTAssertEqual(all.nearest(latitude: latitude, longitude: longitude)?.regionName, region, "\(latitude), \(longitude)")
        }
    }
}
