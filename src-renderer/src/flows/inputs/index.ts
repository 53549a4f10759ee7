// The fields of the inspector and the run form: one per variable type and validator.
export {
  BooleanField,
  EnumField,
  JsonField,
  MAX_SEED,
  MediaField,
  NumberField,
  SeedField,
  TextField,
  ValueField,
  type FieldProps,
} from './fields'
export {
  boundsOf,
  boundsWords,
  choicesOf,
  fieldKindOf,
  specOfFlowInput,
  specOfNodeInput,
  specOfPalettePort,
  valueWords,
  type FieldKind,
  type PortSpec,
} from './spec'
