"""The seeded demo's content, written for Trace (fictional people and organisations).

Fixed order and fixed times, so every reset stores the same content and the same
content fingerprints. Only the police report comes from Nepal Police Demo and no seeded
report comes from Central Hospital Demo: the hospital example (published from the
Organizations form) is then that organisation's only report.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

INCIDENT_NAME = "Flood Relief Demo"
INCIDENT_DESCRIPTION = (
    "Monsoon flooding along the Bhote Koshi valley. Demo data: the people, organisations "
    "and reports are invented for Trace."
)
INCIDENT_CREATED_AT = datetime(2026, 7, 13, 20, 0, tzinfo=UTC)

HOSPITAL = "Central Hospital Demo"
POLICE = "Nepal Police Demo"
CAMP = "Tatopani Relief Camp Demo"
COMMUNITY = "Bhote Koshi Youth Network Demo"

ORGANIZATIONS: tuple[tuple[str, str], ...] = (
    (HOSPITAL, "hospital"),
    (POLICE, "police"),
    (CAMP, "relief camp"),
    (COMMUNITY, "community group"),
)

_START = datetime(2026, 7, 14, 4, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class DemoReport:
    source: str
    person: str
    age: int | None
    status: str
    location: str
    summary: str
    text: str
    minutes: int  # after the demo's start time; fixes reported_at
    references: tuple[str, ...] = ()

    @property
    def reported_at(self) -> datetime:
        return _START + timedelta(minutes=self.minutes)


POLICE_REPORT = DemoReport(
    source=POLICE,
    person="Maya Gurung",
    age=24,
    status="missing",
    location="Tatopani, Bhote Koshi riverbank",
    summary="Family reports Maya Gurung (24) missing since the river overflowed at Tatopani.",
    text=(
        "Duty officer's log, Barhabise post, morning shift. Maya Gurung's elder sister and "
        "uncle came to the post and made this report in person. They say Maya Gurung, 24, "
        "has not been seen since the river overflowed near Tatopani on the evening of 13 "
        "July. She was wearing a red raincoat and was walking home from the tea shop. The "
        "family last spoke to her by phone at about 18:30. Entry written by the duty "
        "officer; the family will come back with a photograph."
    ),
    minutes=340,
    references=("Barhabise post log 0714-031",),
)

COMMUNITY_RELAY = DemoReport(
    source=COMMUNITY,
    person="Maya Gurung",
    age=24,
    status="missing",
    location="Tatopani, Bhote Koshi riverbank",
    summary="Relay of the police notice that Maya Gurung (24) is missing.",
    text=(
        "Please share. Nepal Police Demo has listed Maya Gurung, 24, as missing after the "
        "flooding at Tatopani. Her family told the police she had a red raincoat on. None "
        "of our volunteers has seen her. Anyone with news should go to the Barhabise "
        "police post."
    ),
    minutes=455,
    references=("Police missing-person notice, Barhabise post",),
)


def _camp(person: str, age: int | None, minutes: int, detail: str) -> DemoReport:
    return DemoReport(
        source=CAMP,
        person=person,
        age=age,
        status="safe",
        location="Tatopani relief camp, registration tent",
        summary=f"{person} registered at the relief camp.",
        text=(
            f"Registration desk entry. {person}"
            + (f", {age}," if age is not None else "")
            + f" arrived at the camp and was registered by our desk volunteer. {detail}"
        ),
        minutes=minutes,
        references=(f"Camp register line {minutes // 5:03d}",),
    )


def _community(
    person: str, age: int | None, status: str, location: str, minutes: int, text: str
) -> DemoReport:
    verb = {
        "missing": "is reported missing",
        "seen": "was seen",
        "safe": "is reported safe",
        "deceased": "is reported dead",
        "admitted": "is reported admitted",
    }[status]
    return DemoReport(
        source=COMMUNITY,
        person=person,
        age=age,
        status=status,
        location=location,
        summary=f"{person} {verb} ({location}).",
        text=text,
        minutes=minutes,
    )


OTHER_REPORTS: tuple[DemoReport, ...] = (
    _camp("Ram Bahadur Thapa", 61, 30, "He walked down from Larcha with two neighbours."),
    _camp("Sita Thapa", 58, 35, "She came with her husband; her left wrist is bandaged."),
    _camp("Anil Shrestha", 33, 60, "He asks for news of his brother Bikash."),
    _community(
        "Bikash Shrestha",
        29,
        "missing",
        "Kodari road, km 12",
        95,
        "Our member at the Kodari checkpoint says Bikash Shrestha, 29, drove a supply truck "
        "towards Kodari on 13 July and has not called anyone since. The road is cut at km 12.",
    ),
    _camp("Pema Sherpa", 45, 120, "She registered her two children, Dawa and Lhakpa."),
    _camp("Dawa Sherpa", 12, 121, "Registered by his mother Pema Sherpa."),
    _camp("Lhakpa Sherpa", 9, 122, "Registered by her mother Pema Sherpa."),
    _community(
        "Hari Prasad Adhikari",
        70,
        "seen",
        "Chaku village school",
        150,
        "A volunteer saw Hari Prasad Adhikari, about 70, sheltering in the Chaku village "
        "school on the morning of 14 July. He did not want to leave his goats.",
    ),
    _community(
        "Kamala Tamang",
        38,
        "missing",
        "Listi, upper trail",
        185,
        "Neighbours in Listi say Kamala Tamang, 38, went up the trail to check the fields "
        "before the landslide and has not come back.",
    ),
    _camp("Suman Karki", 27, 210, "He helped carry an older man across the bridge."),
    _camp("Nirmala Karki", 25, 212, "She is pregnant and was sent to the camp nurse."),
    _community(
        "Deepak Rai",
        41,
        "deceased",
        "Bhote Koshi, below Tatopani bridge",
        260,
        "It is with great sadness that we share that Deepak Rai, 41, was found in the river "
        "below the Tatopani bridge. His cousin identified him.",
    ),
    _camp("Gita Rai", 39, 290, "Wife of Deepak Rai. She is with relatives in tent 14."),
    _community(
        "Binod Magar",
        17,
        "missing",
        "Tatopani bus park",
        310,
        "Binod Magar, 17, a student, was last seen at the Tatopani bus park on the evening "
        "of the flood. His classmates are looking for him.",
    ),
    POLICE_REPORT,
    _camp("Binod Magar", 17, 400, "He spent the night on the hill above the bus park."),
    _camp("Mina Gurung", 52, 420, "She is Maya Gurung's aunt and asks for any news of her."),
    COMMUNITY_RELAY,
    _community(
        "Tek Bahadur Bista",
        66,
        "seen",
        "Barhabise health post",
        480,
        "Tek Bahadur Bista, 66, was seen waiting at the Barhabise health post with a cut on "
        "his forehead. He says his house is gone.",
    ),
    _camp("Sarita Bista", 60, 500, "Wife of Tek Bahadur Bista."),
    _camp("Rajesh Lama", None, 530, "He did not give his age. He lost his identity card."),
    _community(
        "Asha Lama",
        8,
        "missing",
        "Khukundol settlement",
        560,
        "Asha Lama, 8, was separated from her family when the water reached Khukundol. She "
        "wears a blue school uniform.",
    ),
    _camp("Asha Lama", 8, 620, "Brought in by a rescue team and reunited with Rajesh Lama."),
    _camp("Krishna Bhandari", 48, 650, "He is a teacher and offered to help at the camp school."),
    _camp("Sunita Bhandari", 44, 651, "She came with Krishna Bhandari."),
    _community(
        "Prakash Dahal",
        35,
        "seen",
        "Kodari road, km 9",
        700,
        "Prakash Dahal, 35, was seen clearing stones on the Kodari road near km 9 with the "
        "road crew. He asked us to tell his mother he is fine.",
    ),
    _camp("Laxmi Dahal", 63, 720, "Mother of Prakash Dahal; she is diabetic."),
)

REPORTS: tuple[DemoReport, ...] = OTHER_REPORTS

HOSPITAL_EXAMPLE = DemoReport(
    source=HOSPITAL,
    person="Maya Gurung",
    age=24,
    status="admitted",
    location="Central Hospital Demo, emergency ward",
    summary="Maya Gurung (24) admitted to the emergency ward in stable condition.",
    text=(
        "Emergency ward admission note. Maya Gurung, 24, was brought in by a rescue team at "
        "07:15 and admitted under the duty doctor. Condition stable: cuts to the left leg "
        "and signs of cold exposure. She gave her name and age to the admitting nurse "
        "herself. Next of kin not yet informed."
    ),
    minutes=1650,
    references=("Admission CH-0715-112",),
)
