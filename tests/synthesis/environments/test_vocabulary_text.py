"""Catalogue words of any spelling: valid compiled code, transliterated identifiers, clear limits.

A catalogue is written by people (`envfoundry build --catalogue FILE`), so every word can hold
quotes, backslashes, triple quotes, braces, newlines, accents or emoji. The compiled class must
still parse, expose the spec's tools and say the words back exactly as written; identifiers are
transliterated, never silently stripped; over-long texts are refused with the field named.
Compiled code is run here with `exec`: it is our own compiler's output, not foreign code.
"""

from __future__ import annotations

import ast
import inspect
import json

import pytest
from pydantic import ValidationError

from synthesis.environments.archetypes.naming import identifier
from synthesis.environments.build import build_environment
from synthesis.environments.compiler import compile_spec
from synthesis.environments.specgen import SpecError, generate_spec
from synthesis.environments.topics import CatalogueError, load_catalogue
from synthesis.models import Topic

# Every character that has to be escaped somewhere, plus accents and an emoji. Each sample
# keeps Latin letters, so it can also name identifiers.
NASTY = [
    "it's",
    'the "best"',
    "back\\slash\\",
    'tri"""ple',
    "ends with quote'",
    'ends with quote"',
    "{brace} }",
    "élève",
    "Straße",
    "smile 🙂",
    "two\nlines",
    "tab\there",
    "nul\x00char",
]

BOOKING = {
    "customer": "patient",
    "provider": "dentist",
    "booking": "appointment",
    "services": ["cleaning", "filling"],
    "specialties": ["general", "orthodontics"],
    "provider_names": ["Dr Ada", "Dr Bo"],
}
ORDERS = {
    "customer": "reader",
    "product": "book",
    "products": ["Dune", "Emma"],
    "categories": ["fiction", "poetry"],
    "price_range": [3, 40],
}
TEXT_FIELDS = {  # archetype -> vocabulary entries holding words (price_range holds numbers)
    "booking": ["customer", "provider", "booking", "services", "specialties", "provider_names"],
    "order_lifecycle": ["customer", "product", "products", "categories"],
}


def _topic(archetype: str, **changes) -> Topic:
    vocabulary = dict(BOOKING if archetype == "booking" else ORDERS)
    vocabulary.update(changes.pop("vocabulary", {}))
    fields = {"topic_id": "t", "title": "T", "description": "D", **changes}
    return Topic(archetype=archetype, vocabulary=vocabulary, **fields)


def _load(spec):
    """The compiled class, instantiated (our own compiler output; see the module docstring)."""
    code = compile_spec(spec)
    ast.parse(code)
    namespace: dict = {}
    exec(compile(code, f"<{spec.env_id}>", "exec"), namespace)  # noqa: S102
    return namespace[spec.class_name]()


def _public_methods(env) -> set[str]:
    return {
        name
        for name, _ in inspect.getmembers(type(env), inspect.isfunction)
        if not name.startswith("_")
    }


def _check_class(spec) -> None:
    """The class parses, exposes exactly the spec's tools, and reads back every text."""
    env = _load(spec)
    assert _public_methods(env) == {t.name for t in spec.tools}
    assert inspect.getdoc(type(env)).startswith(inspect.cleandoc(spec.description))
    for tool in spec.tools:
        doc = inspect.getdoc(getattr(env, tool.name))
        assert doc.startswith(tool.description + "\n\nArgs:\n"), tool.name
        for p in tool.params:
            assert f"    {p.name}: {p.description}\n" in doc + "\n"
    # Analysis (the schemas agents see) reads the same descriptions back from the code.
    built = build_environment(spec)
    assert built.status == "accepted", built.reason
    schemas = {t.name: t.schema_["function"] for t in built.tools}
    for tool in spec.tools:
        assert schemas[tool.name]["description"] == tool.description
        properties = schemas[tool.name]["parameters"]["properties"]
        for p in tool.params:
            if p.enum:
                assert properties[p.name]["enum"] == p.enum


@pytest.mark.parametrize("sample", NASTY, ids=repr)
@pytest.mark.parametrize(
    ("archetype", "field"),
    [(a, f) for a, fields in TEXT_FIELDS.items() for f in [*fields, "title", "description"]],
)
def test_any_word_in_any_field_compiles_to_a_class_with_the_right_tools(archetype, field, sample):
    if field in ("title", "description"):
        topic = _topic(archetype, **{field: f"A {sample} B"})
    else:
        default = (BOOKING if archetype == "booking" else ORDERS)[field]
        value = [sample, *default[1:]] if isinstance(default, list) else sample
        topic = _topic(archetype, vocabulary={field: value})
    _check_class(generate_spec(topic))


def test_every_field_nasty_at_once_still_says_the_words_back_exactly():
    services = ['s"1', "s'2", "s\\3", '"""', "{4}", "é🙂", "a\nb"]
    topic = _topic(
        "booking",
        title='Title """ \\ 🙂',
        description='Line one "x"\nline two \\ """ {y}',
        vocabulary={
            "customer": "élève",
            "provider": 'pro "l\'ami" \\ {y}',
            "booking": "Straße rendez-vous",
            "services": services,
        },
    )
    spec = generate_spec(topic)
    _check_class(spec)
    env = _load(spec)
    # Messages carry the original words, quotes, braces and backslashes included.
    book = spec.entity("strasse_rendez_vous")
    assert book.label == "Straße rendez-vous"
    result = env.get_strasse_rendez_vous("nope")
    assert result == {"success": False, "error": "unknown Straße rendez-vous 'nope'"}
    result = env.find_pro_l_ami_y_by_name("Zed")
    assert result["error"] == "no pro \"l'ami\" \\ {y} with name 'Zed'"
    # Each enum value passes the guard exactly as written; a wrong one is named in the list.
    result = env.create_strasse_rendez_vous("CUS-1", "SLT-1", "nope")
    assert result["error"] == f"service must be one of {services}"
    for service in services:
        result = env.create_strasse_rendez_vous("CUS-1", "SLT-1", service)
        assert result == {"success": False, "error": "unknown élève 'CUS-1'"}


def test_multi_line_texts_keep_the_docstring_layout_analysis_reads():
    # Specs may also be written by an LLM: a line break in a parameter description or a rule
    # continues that entry (indented under it), it does not start a new one.
    spec = generate_spec(_topic("booking"))
    spec.rules = ["first rule\ncontinued", "second rule"]
    spec.tool("get_appointment").params[0].description = 'Id, "quoted"\nsecond line'
    env = _load(spec)
    assert "Rules:\n- first rule\n  continued\n- second rule" in inspect.getdoc(type(env))
    doc = inspect.getdoc(env.get_appointment)
    assert doc.endswith('Args:\n    appointment_id: Id, "quoted"\n        second line')
    built = build_environment(spec)
    schema = next(t.schema_ for t in built.tools if t.name == "get_appointment")
    described = schema["function"]["parameters"]["properties"]["appointment_id"]["description"]
    assert described == 'Id, "quoted" second line'


def test_plain_text_is_emitted_exactly_as_written():
    # Escaping must not touch today's plain vocabulary: the default build is pinned by hash.
    code = compile_spec(generate_spec(_topic("booking", vocabulary={"features": []})))
    assert "    name: The dentist's name.\n" in code
    assert "\"error\": \"status must be one of ['available', 'booked']\"" in code
    assert '"error": f"unknown dentist {dentist_id!r}"' in code
    assert "appointment_id = self._next_id(self.appointments, 'APP')" in code
    assert code.startswith('"""T: D\n\nGenerated by EnvFoundry from spec t-booking')


# --------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    ("word", "name"),
    [
        ("élève", "eleve"),
        ("Straße", "strasse"),
        ("ß", "ss"),
        ("Ærøskøbing", "aeroskobing"),
        ("Łódź", "lodz"),
        ("İstanbul", "istanbul"),
        ("ﬁsh", "fish"),
        ("Crème Brûlée!", "creme_brulee"),
        ("pet_owner", "pet_owner"),
        ("Gear-Item 2", "gear_item_2"),
        ("smile 🙂 face", "smile_face"),
    ],
)
def test_identifiers_are_transliterated(word, name):
    assert identifier(word, "vocabulary 'customer'") == name


def test_a_transliterated_noun_names_identifiers_and_keeps_its_spelling_in_text():
    spec = generate_spec(
        _topic("order_lifecycle", topic_id="école", vocabulary={"customer": "élève"})
    )
    assert spec.class_name == "EcoleEnv"
    pupil = spec.entity("eleve")
    assert (pupil.collection, pupil.id_prefix, pupil.label) == ("eleves", "ELV", "élève")
    finder = spec.tool("find_eleve_by_email")
    assert finder.description == "Find a élève by email address."
    assert spec.tool("create_order").params[0].name == "eleve_id"
    assert spec.tool("create_order").params[0].description == "Id of the élève."


@pytest.mark.parametrize(
    ("word", "message"),
    [
        ("🙂🙂", "vocabulary 'customer' = '🙂🙂' has no letters to name identifiers with"),
        ("--- 42", "vocabulary 'customer' = '--- 42' has no letters to name identifiers with"),
        (
            "ученик",
            "vocabulary 'customer' = 'ученик' has letters with no ASCII spelling for "
            "identifiers ('у', 'ч', 'е', 'н', 'и', 'к')",
        ),
        (
            "3d printer",
            "vocabulary 'customer' = '3d printer' must start with a letter to name "
            "identifiers (it gives '3d_printer')",
        ),
        (7, "vocabulary 'customer' = 7 must be a text, not int"),
    ],
)
def test_a_noun_that_cannot_name_identifiers_is_a_spec_error_naming_topic_and_field(word, message):
    for archetype in TEXT_FIELDS:
        with pytest.raises(SpecError) as info:
            generate_spec(_topic(archetype, topic_id="shop", vocabulary={"customer": word}))
        assert str(info.value) == f"topic shop: {message}"


def test_a_topic_id_without_letters_is_a_spec_error():
    with pytest.raises(SpecError, match=r"^topic 🙂: topic_id = '🙂' has no letters"):
        generate_spec(_topic("booking", topic_id="🙂"))


@pytest.mark.parametrize(
    ("customer", "product"), [("class", "record"), ("self", "quantity"), ("dict", "lambda")]
)
def test_nouns_that_are_keywords_or_local_names_do_not_break_the_methods(customer, product):
    # create_order keeps each referenced record in a local variable named after its entity;
    # "self", "record", a keyword or a parameter name must not be that variable. Every optional
    # feature is on, so the feature tools meet the same nouns.
    from synthesis.environments.archetypes.order_lifecycle import FEATURES

    vocabulary = {"customer": customer, "product": product, "features": list(FEATURES)}
    spec = generate_spec(_topic("order_lifecycle", vocabulary=vocabulary))
    _check_class(spec)
    env = _load(spec)
    people, goods = (getattr(env, e.collection) for e in spec.entities[:2])
    people["C-1"] = {"id": "C-1"}
    goods["P-1"] = {"id": "P-1", "price": 2.5, "stock": 3}
    args = {f"{customer}_id": "C-1", f"{product}_id": "P-1", "quantity": 2}
    result = env.create_order(**args, delivery="standard")
    assert result["success"] and result["data"]["total"] == 5.0
    assert goods["P-1"]["stock"] == 1
    assert env.cancel_order(result["data"]["id"])["success"] and goods["P-1"]["stock"] == 3
    restock = getattr(env, f"restock_{product}")
    assert restock(**{f"{product}_id": "P-1", "quantity": 4})["success"]
    assert goods["P-1"]["stock"] == 7
    assert getattr(env, f"change_{product}_price")(**{f"{product}_id": "P-1", "price": 3.0})[
        "success"
    ]


# --------------------------------------------------------------------------- lengths


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"title": "x" * 121}, "title is 121 characters long; at most 120 are allowed"),
        (
            {"description": "d" * 2001},
            "description is 2001 characters long; at most 2000 are allowed",
        ),
        (
            {"vocabulary": {"customer": "c" * 81}},
            f"vocabulary 'customer' ({'c' * 24!r}…) is 81 characters long; at most 80 are allowed",
        ),
        (
            {"vocabulary": {"products": ["ok", "p" * 95]}},
            f"vocabulary 'products'[1] ({'p' * 24!r}…) is 95 characters long; "
            "at most 80 are allowed",
        ),
    ],
)
def test_overlong_texts_are_refused_naming_the_field_and_length(tmp_path, changes, message):
    with pytest.raises(ValidationError) as refused:
        _topic("order_lifecycle", **changes)
    assert message in str(refused.value)
    entry = _topic("order_lifecycle").model_dump(mode="json")
    entry.update(changes)
    path = tmp_path / "topics.json"
    path.write_text(json.dumps({"topics": [entry]}))
    with pytest.raises(CatalogueError) as info:
        load_catalogue(path)
    assert str(info.value) == f"catalogue {path}: entry 0 ('t') is malformed: {message}"


def test_texts_at_the_limits_are_accepted():
    topic = _topic(
        "order_lifecycle",
        title="x" * 120,
        description="d" * 2000,
        vocabulary={"customer": "c" * 80, "products": ["p" * 80]},
    )
    assert len(compile_spec(generate_spec(topic))) > 0
