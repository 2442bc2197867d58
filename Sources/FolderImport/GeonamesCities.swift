// Every city of Debian's libgeonames (GeoNames' cities of 15,000 people or more, built into the library), and
// the few of that list it leaves out.
import CGeonames
import Foundation

public enum GeonamesCities {
    /// All cities, read once per process (24,361 in libgeonames 0.3: 20 ms).
    public static let all: [City] = {
        let count = Int(geonames_get_n_cities())
        var cities: [City] = []
        cities.reserveCapacity(max(0, count))
        for index in 0..<max(0, count) {
            guard let city = geonames_get_city(Int32(index)) else { continue }
            defer { geonames_city_free(city) }
            func text(_ value: UnsafePointer<gchar>?) -> String { value.map { String(cString: $0) } ?? "" }
            cities.append(City(name: text(geonames_city_get_name(city)), state: text(geonames_city_get_state(city)),
                               country: text(geonames_city_get_country(city)),
                               timezone: text(geonames_city_get_timezone(city)),
                               latitude: geonames_city_get_latitude(city), longitude: geonames_city_get_longitude(city),
                               population: Int(geonames_city_get_population(city))))
        }
        return regionsToldApart(cities + missingFromLibgeonames)
    }()

    /// A state name that is a region of several countries (Punjab in India and Pakistan, Capital Region in
    /// Denmark and Iceland, Montana in the USA and Bulgaria: 29 names in libgeonames) merged their photos into
    /// one /regions folder. The country with the most cities of that name keeps it; the others' are
    /// "Punjab (Pakistan)". Decided from the data set, not the library, so a name never changes when photos
    /// from the other country arrive.
    static func regionsToldApart(_ cities: [City]) -> [City] {
        var citiesPerCountry: [String: [String: Int]] = [:]
        for city in cities where !city.state.isEmpty { citiesPerCountry[city.state, default: [:]][city.country, default: 0] += 1 }
        var keeper: [String: String] = [:]
        for (state, countries) in citiesPerCountry where countries.count > 1 {
            keeper[state] = countries.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
        }
        guard !keeper.isEmpty else { return cities }
        return cities.map { city in
            guard let kept = keeper[city.state], kept != city.country, !city.country.isEmpty else { return city }
            var told = city
            told.region = "\(city.state) (\(city.country))"
            return told
        }
    }

    /// Cities of GeoNames' 15,000-people list that Debian's libgeonames leaves out (it keeps only cities
    /// with a first-level division, which city-states and some territories have none of): without them a
    /// photo in Singapore was filed in Johor, Malaysia, one in Macau in Guangdong, China, one in Gibraltar in
    /// Andalusia, Spain. Positions from GeoNames; the region is the territory's (Nouméa's, its province).
    static let missingFromLibgeonames: [City] = [
        City(name: "Singapore", state: "Singapore", country: "Singapore", timezone: "Asia/Singapore",
             latitude: 1.28967, longitude: 103.85007),
        City(name: "Woodlands", state: "Singapore", country: "Singapore", timezone: "Asia/Singapore",
             latitude: 1.43801, longitude: 103.78877),
        City(name: "Jurong West", state: "Singapore", country: "Singapore", timezone: "Asia/Singapore",
             latitude: 1.34037, longitude: 103.70905),
        City(name: "Tampines", state: "Singapore", country: "Singapore", timezone: "Asia/Singapore",
             latitude: 1.35411, longitude: 103.94365),
        City(name: "Macau", state: "Macau", country: "Macau S.A.R", timezone: "Asia/Macau",
             latitude: 22.20056, longitude: 113.54611),
        City(name: "Gibraltar", state: "Gibraltar", country: "Gibraltar", timezone: "Europe/Gibraltar",
             latitude: 36.14474, longitude: -5.35257),
        City(name: "Philipsburg", state: "Sint Maarten", country: "Sint Maarten", timezone: "America/Lower_Princes",
             latitude: 18.026, longitude: -63.04582),
        City(name: "Willemstad", state: "Curaçao", country: "Curaçao", timezone: "America/Curacao",
             latitude: 12.1084, longitude: -68.93354),
        City(name: "Oranjestad", state: "Aruba", country: "Aruba", timezone: "America/Aruba",
             latitude: 12.52398, longitude: -70.02703),
        City(name: "Saint Peter Port", state: "Guernsey", country: "Guernsey", timezone: "Europe/Guernsey",
             latitude: 49.45981, longitude: -2.53527),
        City(name: "Nouméa", state: "South Province", country: "New Caledonia", timezone: "Pacific/Noumea",
             latitude: -22.27631, longitude: 166.4572),
    ]
}
